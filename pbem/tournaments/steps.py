"""When tournaments move on by themselves: a game of theirs ended (the hook after every end of a
game in a mail's transaction), or time passed (the scheduler's run: start dates, round deadlines,
and the results of games the clock ended, which the scheduler ends outside any mail).

Both take the tournament row for update and call ``running.advance``, which does what is due once:
the first transaction to see a round complete pairs the next one, the others find it paired.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

from engine import State
from pbem.community import moderation
from pbem.i18n import _, speaking_to
from pbem.outbox.compose import Section, subject_phrase
from pbem.processing import hooks
from pbem.processing.context import NOTICE, MailContext, PlannedMail
from pbem.record import iso
from pbem.store.base import GameRow
from pbem.store.tournaments import TournamentRow
from pbem.tournaments import document as d
from pbem.tournaments import running
from pbem.tournaments.access import save

log = logging.getLogger("pbem.tournaments")


def on_game_ended(ctx: MailContext, row: GameRow, state: State, headline: Callable[[], str],
                  note: Callable[[], list[str]]) -> None:
    ident = (row.record.get("tournament") or {}).get("id")
    if not ident or running.held(ident):
        return
    with running.holding():
        trow = ctx.tx.tournaments.get(ident, for_update=True)
        if trow is None:
            return
        running.hold(ident)
        running.advance(ctx, trow)
        save(ctx, trow)


def step(scheduler: Any, now: datetime, report: Any) -> None:
    """The scheduler's part: each due or running tournament in a transaction of its own."""
    with scheduler.store.transaction() as tx:
        ids = sorted(set(tx.tournaments.due(now)) | set(tx.tournaments.running()))
    for ident in ids:
        scheduler.in_context(report, f"tournament {ident}", lambda ctx, ident=ident: _due(ctx, ident), now)


def _due(ctx: MailContext, ident: str) -> None:
    with running.holding():
        trow = ctx.tx.tournaments.get(ident, for_update=True)
        if trow is None:
            return
        running.hold(ident)
        before = (trow.status, trow.due_at, len(trow.doc.get("rounds", [])))
        if trow.status == "open" and trow.starts_at is not None and trow.starts_at <= ctx.now:
            running.start(ctx, trow)
        elif trow.status == "running":
            running.advance(ctx, trow)
            if trow.status == "running" and trow.due_at is not None and trow.due_at <= ctx.now:
                _round_deadline(ctx, trow)
        if (trow.status, trow.due_at, len(trow.doc.get("rounds", []))) != before or ctx.planned:
            save(ctx, trow)


def _round_deadline(ctx: MailContext, trow: TournamentRow) -> None:
    """A round's deadline passed with games still in play: ended by the score now
    (``adjudicate score``), or the organizer and the moderators are asked to decide them
    (``adjudicate moderator``; the move clocks may end them first)."""
    settings = d.settings_from_json(trow.doc["settings"])
    for round_ in trow.doc.get("rounds", []):
        deadline = datetime.fromisoformat(round_["deadline_at"].replace("Z", "+00:00"))
        if round_.get("handled") or deadline > ctx.now:
            continue
        playing = [item for item in round_["games"] if item.get("id") and item.get("points") is None]
        round_["handled"] = iso(ctx.now)
        if settings.adjudicate == "score":
            for item in playing:
                loaded = ctx.load(item["id"])
                if loaded is None or loaded[0].status != "active":
                    continue
                state = loaded[1]
                totals = state.score().totals
                best = max(totals.values())
                winner = [s for s, v in totals.items() if v == best]
                result = winner[0] if len(winner) == 1 else "draw"
                try:
                    moderation.end(ctx, item["id"], result, by=trow.organizer,
                                   why=_("the round's deadline passed; decided by the score"))
                except moderation.ModerationError:
                    log.exception("tournament %s: could not end %s", trow.id, item["id"])
            running.advance(ctx, trow)
        elif playing:
            games = ", ".join(item["id"] for item in playing)
            for email in dict.fromkeys([trow.organizer, *ctx.config.moderators]):
                with speaking_to(ctx.tx, email, ctx.config.language):
                    headline = _("{id}: round {n} passed its deadline; games in play: {games}").format(
                        id=trow.id, n=round_["number"], games=games)
                    ctx.planned.append(PlannedMail(
                        to=email, kind=NOTICE, subject=f"[pbem {trow.id}] {subject_phrase(headline, 140)}",
                        headline=headline,
                        sections=[Section(lines=[
                            _("Decide each with: tournament {id} result GAME SEAT (or draw); the next round "
                              "starts when the last one ends. Their move clocks may end them first.").format(
                                id=trow.id)])]))
    running.schedule_due(trow)


def on_address_moved(ctx: MailContext, old: str, new: str) -> None:
    """The player's tournaments follow them to the new address (their games already have)."""
    with running.holding():
        for found in ctx.tx.tournaments.list(email=old):
            trow = ctx.tx.tournaments.get(found.id, for_update=True)
            if trow is None or d.entrant(trow.doc, new) is not None:
                continue
            running.hold(trow.id)
            d.rename_entrant(trow.doc, old, new)
            if trow.organizer == old:
                trow.organizer = new
            save(ctx, trow)


hooks.GAME_ENDED.append(on_game_ended)
hooks.ADDRESS_MOVED.append(on_address_moved)
hooks.SCHEDULED.append(step)
assert TournamentRow
