"""One-move turns: with ``set automove on`` a player's only legal move is played for them the moment
their turn comes (a pass that is their only move, the one build left), and they are told; when
there is any choice, even of an optional part (a claim, a ship), nothing is played. Off by default.

The move is found by the engine (``State.forced_move``, through ``engine.base``: no game is named
here) and played in the same step as the move that brought the turn (``hooks.MOVE_APPLIED``), so
it commits in the same transaction. It is an ordinary move entry in the record, marked
``"automatic": true``, and replays like any other. After it, every hook of a move runs again as
for a move by mail: the opponent's queued reply to it is played, a pending proposal lapses, and if
the turn comes back to a player with one move and automove on, that is played too (a chain has
at most ``MAX_CHAIN`` moves in one step). A move of the computer opponent brings a turn like a
player's move does. Turns that come otherwise (the start of a game, an undo, a moderator's
rollback, a seat dropped at a deadline) wait for the player as usual.
"""

from __future__ import annotations

from contextvars import ContextVar
from functools import partial
from typing import Any

from engine import State, get_game
from pbem.i18n import N_, _
from pbem.processing import hooks
from pbem.processing.computer_seats import is_computer
from pbem.processing.context import MailContext
from pbem.processing.gamemail import local_move
from pbem.processing.games import CommandFailed
from pbem.processing.settings import Setting, register_setting
from pbem.record import append_move
from pbem.store.base import GameRow

KEY = "automove"
MAX_CHAIN = 100
_ON, _OFF = ("on", "yes", "true", "1"), ("off", "no", "false", "0")
_DEPTH: ContextVar[int] = ContextVar("pbem_automove_depth", default=0)


def _check(ctx: MailContext, value: str) -> str | None:
    word = value.strip().lower()
    if word in _ON:
        return "on"
    if word in _OFF:
        return None  # the default: not stored
    raise CommandFailed(_("automove takes on or off, not {value!r}: e.g. set automove on").format(
        value=value))


def wants_automove(ctx: MailContext, email: str) -> bool:
    return ctx.tx.get_player(email).get(KEY) == "on"


def play_forced(ctx: MailContext, row: GameRow, state: State, seat: str) -> hooks.AfterMove | None:
    """hooks.MOVE_APPLIED: the seat now to move has one move, no choice, and asked for it to be
    played: play it, then whatever follows it."""
    nxt = state.to_move
    if row.status != "active" or state.is_over or nxt is None or _DEPTH.get() >= MAX_CHAIN:
        return None
    player = next((s for s in row.seats if s.seat == nxt), None)
    if player is None or is_computer(player.email) or not wants_automove(ctx, player.email):
        return None
    move = state.forced_move()
    if move is None:
        return None
    before, index = state.copy(), len(row.record["moves"])
    canonical, notes = append_move(get_game(row.game), state, row.record, state.move_text(move),
                                   ctx.now, nxt)
    row.record["moves"][index]["automatic"] = True
    ctx.outcomes.append(f"automatic {canonical}")
    after = hooks.AfterMove(followed=[(nxt, partial(_played, before, canonical))], lines=list(notes),
                            tell=[nxt])
    with ctx.speaking_to(player.email):  # read by that player alone
        after.private[nxt] = [
            _("Played for you: the only legal move, {move} (move {number}).").format(
                move=local_move(before, canonical), number=state.ply),
            _("You asked for this with 'set automove on'. To choose every move yourself: "
              "set automove off")]
    depth = _DEPTH.set(_DEPTH.get() + 1)
    try:  # what any move brings: a queued reply, a lapsed proposal, the next forced move
        after.add(hooks.after_move(ctx, row, state, nxt))
    finally:
        _DEPTH.reset(depth)
    return after


def _played(before: State, move: str) -> str:
    return _("played {move} automatically (the only legal move)").format(move=local_move(before, move))


def _shown(value: Any) -> str:
    return _("on: your only legal move is played for you")


register_setting(Setting(
    KEY, "set automove on|off",
    N_("when your turn comes and you have exactly one legal move (a forced pass, the only build), "
       "it is played for you at once and you are told; never when there is a choice. Off by "
       "default."),
    _check, show=_shown, default=N_("off: you choose every move yourself")))
hooks.MOVE_APPLIED.append(play_forced)

__all__ = ["play_forced", "wants_automove"]
