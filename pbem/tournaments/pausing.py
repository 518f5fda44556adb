"""Pausing a tournament stops its time, not only its rounds.

A moderator pauses a tournament for a reason that concerns everyone in it (a holiday season, a
dispute to settle, a server move), so the players' time must not run out meanwhile: ``tournament
T pause`` stops the move clock of every game of the tournament still in play, as ``admin pause``
does for one game, and the round's deadline stops with them; ``resume`` starts each clock again
with the time it had left (the mover's vacations respected) and moves the round's deadline on by
the length of the pause. Games can still be played while paused (a move made then starts the
opponent's turn paused); no new round is paired until the tournament resumes.

A game whose clock was already stopped (a moderator's ``admin pause``, a bouncing address) is
left alone both ways: the tournament restarts only the clocks it stopped (``doc["paused"]``).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from pbem.clocks.control import ClockError
from pbem.community import deadlines as dl
from pbem.community.moderation import record_action
from pbem.i18n import _
from pbem.processing.context import MailContext
from pbem.record import iso
from pbem.store.base import GameRow
from pbem.store.tournaments import TournamentRow
from pbem.tournaments import document as d
from pbem.tournaments import running


def _moment(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _plies(row: GameRow) -> int:
    return sum(1 for entry in row.record.get("moves", []) if "move" in entry)


def stop_clocks(ctx: MailContext, trow: TournamentRow, by: str, why: str) -> list[str]:
    """Stop the clock of every game in play; returns the games whose clock this stopped."""
    stopped = []
    for item in d.running_games(trow.doc):
        row = ctx.tx.get_game(item["id"], for_update=True)
        if row is None or row.status != "active" or row.deadline_at is None or dl.is_paused(row):
            continue
        try:
            dl.pause(row, ctx.now, why="tournament")
        except ClockError:
            continue
        record_action(row, "pause", by, why or f"tournament {trow.id}", ctx.now,
                      _plies(row))
        row.updated_at = ctx.now
        ctx.tx.save_game(row)
        stopped.append(row.id)
    trow.doc["paused"] = {"at": iso(ctx.now), "games": stopped}
    return stopped


def restart_clocks(ctx: MailContext, trow: TournamentRow, by: str, why: str) -> list[str]:
    """Start again the clocks the pause stopped; the rounds' deadlines move on by the pause."""
    paused: dict[str, Any] = trow.doc.pop("paused", None) or {}
    restarted = []
    for game_id in paused.get("games", []):
        row = ctx.tx.get_game(game_id, for_update=True)
        if row is None or row.status != "active" or not dl.is_paused(row):
            continue
        away = dl.seat_vacations(ctx.tx, row, row.to_move) if row.to_move else []
        try:
            dl.resume(row, ctx.now, away)
        except ClockError:
            continue
        record_action(row, "resume", by, why or f"tournament {trow.id}", ctx.now,
                      _plies(row))
        row.updated_at = ctx.now
        ctx.tx.save_game(row)
        restarted.append(row.id)
    if paused.get("at"):
        length = ctx.now - _moment(paused["at"])
        for round_ in trow.doc.get("rounds", []):
            if not round_.get("handled") and length > timedelta(0):
                round_["deadline_at"] = iso(_moment(round_["deadline_at"]) + length)
        running.schedule_due(trow)
    return restarted


def clock_lines(ctx: MailContext, trow: TournamentRow, email: str, games: list[str],
                resumed: bool) -> list[str]:
    """For one entrant: which of their games' clocks stopped, or the deadlines they now have."""
    lines = []
    for game_id in games:
        row = ctx.tx.get_game(game_id)
        if row is None or all(s.email != email for s in row.seats):
            continue
        mine = next(s.seat for s in row.seats if s.email == email)
        if not resumed:
            lines.append(_("{game}: the clock is stopped.").format(game=game_id))
        elif row.to_move == mine and row.deadline_at is not None:
            lines.append(_("{game}: your move, by {when} UTC.").format(
                game=game_id, when=f"{row.deadline_at:%Y-%m-%d %H:%M}"))
        else:
            lines.append(_("{game}: the clock runs again.").format(game=game_id))
    if lines and not resumed:
        lines.append(_("You may go on playing meanwhile (answer each game's own mail); no time counts "
                       "until it resumes."))
    rounds = trow.doc.get("rounds") or []
    if resumed and rounds and not rounds[-1].get("handled") and trow.status == "running":
        lines.append(_("Round {n} ends on {when} UTC.").format(
            n=rounds[-1]["number"], when=f"{_moment(rounds[-1]['deadline_at']):%Y-%m-%d %H:%M}"))
    return lines


__all__ = ["clock_lines", "restart_clocks", "stop_clocks"]
