"""Queued (conditional) moves: ``queue GAME`` followed by lines ``if THEIR-MOVE then MY-MOVE`` (or
``then MY-MOVE``, for a move that is legal whatever they do); ``queue GAME`` alone shows the queue,
``queue GAME clear`` empties it.

A queue is written while the opponent is to move and answers that one move: the lines are
alternatives, tried in order, and the first whose condition is the move just made (as the server
writes it) is played. Each line is checked when it is queued, and its reply is checked again when it
is used: a reply that is no longer legal is not played, the queue is dropped and its player is told
why, privately. A queue that no line of which matches is dropped too. Either way that player then
gets the usual "your move".

The reply is played in the same processing step as the opponent's move (``hooks.MOVE_APPLIED``), so
it commits in the same transaction: after a crash both are applied again, or neither. It goes into
the record as an ordinary move entry, marked ``"queued": true``; a move that ends the game ends it
normally.

The queue itself is the player's secret: it lives in ``record["queue"]`` (per seat, with the
position it was written for), which ``pbem.record.player_view`` and the record attachment leave out,
and what is said about a queue that was not used goes only to its player. Queued moves name only
what the player can see: where a draw is made after the opponent's move (the Space Truckin' tile),
the reply would name something nobody has seen yet, so such lines are refused.
"""

from __future__ import annotations

import re
from functools import partial
from typing import Any

from engine import MoveError, State, get_game
from pbem import failpoints
from pbem.commands.helptext import HELP_TOPICS
from pbem.commands.parsing import GAME_ID, Command, CommandError, register_verb
from pbem.i18n import N_, _
from pbem.outbox.compose import Section
from pbem.processing import hooks
from pbem.processing.context import MailContext
from pbem.processing.gamemail import game_names, who
from pbem.processing.games import CommandFailed, authenticate, game_id_of, load_game
from pbem.processing.handlers import register_handler
from pbem.record import append_move, iso
from pbem.store.base import GameRow, Seat

USAGE = N_("queue GAME [clear]   (then lines: if THEIR-MOVE then MY-MOVE; see help queue)")
_LINE = re.compile(r"^\s*(?:if\s+(?P<their>.+?)\s+then\s+(?P<mine>.+?)|then\s+(?P<always>.+?))\s*\.?\s*$",
                   re.IGNORECASE)
MAX_LINES = 20
MAX_TRIED = 2000  # of their legal moves, when checking a "then MY-MOVE" line
HELP = """Queued moves: answer your opponent's next move before it is made.

  queue GAME
  if THEIR-MOVE then MY-MOVE
  if THEIR-MOVE then MY-MOVE
  then MY-MOVE

Send it while your opponent is to move. When their move arrives, the
first line whose THEIR-MOVE is that move (as the server writes it, e.g.
'tower red A2 claim A2') is played at once as your move; 'then MY-MOVE'
alone answers any move. Every line is checked when you queue it, and the
reply again when it is used: if their move made it illegal (say they
built on its lot), nothing is played, the queue is dropped and you are
told why. A queue answers one move; it is dropped when none of its lines
matches. Nobody else sees it.

  queue GAME          shows your queue
  queue GAME clear    empties it

Where something is drawn after your opponent's move (the Space Truckin'
tile), your move depends on what nobody has seen yet, so it cannot be
queued. Try a move first with: preview GAME MOVE"""


def parse_queue(line: str, rest: list[str], in_game_reply: bool) -> Command | CommandError:
    words = list(rest)
    game = words.pop(0).lower() if words and GAME_ID.match(words[0]) else None
    if len(words) == 1 and words[0].lower() == "clear":
        return Command("queue", line, game=game, args={"clear": True})
    command = Command("queue", line, game=game, args={"clear": False})
    if words:
        command.note.append(" ".join(words))  # "queue ac-1 if X then Y" on one line
    return command


# --- checking lines ----------------------------------------------------------------------------------

def _hidden(row: GameRow) -> str:
    return (f"in {get_game(row.game).title} something is drawn after their move, so your next move "
            "depends on what nobody has seen yet: a queued move cannot name it. Wait for your turn "
            "(or try one with: preview GAME MOVE).")


def _reply_after(trial: State, mine: str, seat: str) -> str:
    """The canonical text of ``mine`` as ``seat``'s move in ``trial``; raises MoveError."""
    move = trial.parse_move(mine)
    canonical = trial.move_text(move)
    trial.copy().push(move)
    return canonical


def _check_line(row: GameRow, state: State, seat: str, number: int, text: str,
                names: dict[str, str]) -> dict[str, Any]:
    """One queue line as stored: ``{"if": THEIR or None, "then": MINE}``, both canonical; raises
    CommandFailed saying what is wrong with it and the right form."""
    where = f"queue line {number} ({text.strip()!r})"
    match = _LINE.match(text)
    if match is None:
        raise CommandFailed(f"{where}: write 'if THEIR-MOVE then MY-MOVE' or 'then MY-MOVE'.")
    mover = state.to_move or ""
    them = names.get(mover, mover)
    their = match.group("their")
    if their is not None:
        trial = state.copy()
        try:
            move = trial.parse_move(their)
            their_text = trial.move_text(move)
            trial.push(move)
        except MoveError as exc:
            raise CommandFailed(f"{where}: {their!r} is not a move {them} can make now: {exc}") from None
        if trial.is_over:
            raise CommandFailed(f"{where}: {their_text} would end the game; there is nothing to reply.")
        if trial.pending_chance() is not None:
            raise CommandFailed(f"{where}: " + _hidden(row))
        if trial.to_move != seat:
            raise CommandFailed(f"{where}: after {their_text} it is not your move "
                                f"({who(trial.to_move, seat, names)} moves next).")
        try:
            mine = _reply_after(trial, match.group("mine"), seat)
        except MoveError as exc:
            raise CommandFailed(f"{where}: after {their_text}, {match.group('mine')!r} would not be "
                                f"legal: {exc}") from None
        return {"if": their_text, "then": mine}
    return _check_always(row, state, seat, where, match.group("always"), them)


def _check_always(row: GameRow, state: State, seat: str, where: str, mine_text: str,
                  them: str) -> dict[str, Any]:
    """``then MY-MOVE``: it must be legal after some move of theirs (their move may still make it
    illegal, e.g. by taking its lot: it is checked again when used, and ``refused_after`` names
    one such move, so the player knows)."""
    mine = refused_after = None
    error: MoveError | None = None
    for move in state.legal_moves()[:MAX_TRIED]:
        trial = state.copy()
        trial.push(move)
        if trial.is_over or trial.to_move != seat:
            continue
        if trial.pending_chance() is not None:
            raise CommandFailed(f"{where}: " + _hidden(row))
        try:
            mine = _reply_after(trial, mine_text, seat)
        except MoveError as exc:
            error = error or exc
            refused_after = refused_after or state.move_text(move)
    if mine is None:
        if error is None:
            raise CommandFailed(f"{where}: whatever {them} does, it will not be your move next.")
        raise CommandFailed(f"{where}: {mine_text!r} would not be legal after any move {them} can make: "
                            f"{error}")
    return {"if": None, "then": mine, "refused_after": refused_after}


def _listing(entry: dict[str, Any]) -> list[str]:
    return [f"  if {line['if']} then {line['then']}" if line.get("if") else f"  then {line['then']}"
            for line in entry.get("lines", [])]


def _warnings(entry: dict[str, Any]) -> list[str]:
    return [f"Note: {line['then']} would not be legal if they play {line['refused_after']} (for "
            "example); it is checked again when it is used." for line in entry.get("lines", [])
            if line.get("refused_after")]


# --- the command -------------------------------------------------------------------------------------

def do_queue(ctx: MailContext, command: Command) -> None:
    row, state = load_game(ctx, game_id_of(ctx, command))
    seat = authenticate(ctx, row, command)
    names = game_names(ctx.tx, row)
    queues: dict[str, Any] = row.record.get("queue") or {}
    mine = queues.get(seat.seat)
    if mine is not None and mine.get("ply") != state.ply:
        mine = None  # written for a position the game has left; dropped at the next save
    lines = [line for line in command.note if line.strip()]
    if command.args.get("clear"):
        if mine is None:
            raise CommandFailed(f"you have no queued moves in game {row.id}.")
        queues.pop(seat.seat, None)
        _save_queues(ctx, row, queues)
        ctx.reply(None, row.id, headline=f"Your queued moves for {row.id} are cleared")
        return
    if not lines:
        if mine is None:
            ctx.reply(Section(lines=["To queue an answer to your opponent's next move, send:",
                                     f"  queue {row.id}", "  if THEIR-MOVE then MY-MOVE",
                                     "'help queue' explains more."]),
                      row.id, headline=f"You have no queued moves in {row.id}")
        else:
            ctx.reply(Section(lines=[*_listing(mine), f"To empty it: queue {row.id} clear"]), row.id,
                      headline=f"Your queue for {row.id}: {len(mine['lines'])} line(s)")
        return
    _check_seat(row, state, seat, names)
    if len(lines) > MAX_LINES:
        raise CommandFailed(f"a queue holds at most {MAX_LINES} lines; you sent {len(lines)}.")
    checked = [_check_line(row, state, seat.seat, i, text, names) for i, text in enumerate(lines, 1)]
    replaced = mine is not None
    queues[seat.seat] = {"ply": state.ply, "at": iso(ctx.now), "lines": checked}
    _save_queues(ctx, row, queues)
    ctx.outcomes.append(f"queued {len(checked)} line(s)")
    mover = names.get(state.to_move or "", state.to_move or "")
    ctx.reply(Section(lines=[
        *_listing(queues[seat.seat]), *_warnings(queues[seat.seat]),
        f"When {mover} moves, the first line that answers the move is played at once as your move "
        "(move " + str(state.ply + 2) + "), after a check against the rules. Nobody else sees your "
        "queue.", ("It replaces your earlier queue. " if replaced else "")
        + f"To see it: queue {row.id}. To empty it: queue {row.id} clear"]),
        row.id, headline=f"Queued for {row.id}: {len(checked)} line(s), played when {mover} moves")


def _check_seat(row: GameRow, state: State, seat: Seat, names: dict[str, str]) -> None:
    if row.status != "active":
        raise CommandFailed(f"game {row.id} is {row.status}; moves are queued only in running games.")
    if seat.seat in state.dropped_seats:
        raise CommandFailed(f"you were dropped from game {row.id} at a deadline; it goes on without you.")
    if state.to_move == seat.seat:
        raise CommandFailed(f"it is your turn in game {row.id} now: send the move itself (a queue "
                            "answers your opponent's next move).")


def _save_queues(ctx: MailContext, row: GameRow, queues: dict[str, Any]) -> None:
    if queues:
        row.record["queue"] = queues
    else:
        row.record.pop("queue", None)
    row.updated_at = ctx.now
    ctx.tx.save_game(row)


# --- using a queue -----------------------------------------------------------------------------------

def play_queued(ctx: MailContext, row: GameRow, state: State, seat: str) -> hooks.AfterMove | None:
    """After ``seat``'s move: while the seat now to move has a queue, play its answer."""
    queues: dict[str, Any] = row.record.get("queue") or {}
    if not queues:
        return None
    after = hooks.AfterMove()
    names = game_names(ctx.tx, row)
    game = get_game(row.game)
    for _turn in range(len(row.seats)):
        nxt = state.to_move
        if state.is_over or nxt is None or nxt not in queues:
            break
        entry = queues.pop(nxt)
        last = next(e for e in reversed(row.record["moves"]) if "move" in e and "chance" not in e)
        their, them = str(last["move"]), names.get(str(last.get("seat")), str(last.get("seat")))
        if entry.get("ply") != state.ply - 1:
            _dropped(after, nxt, "it was written for an earlier position of the game")
            break
        line = next((item for item in entry.get("lines", []) if item.get("if") in (None, their)), None)
        if line is None:
            _dropped(after, nxt, f"none of its lines answers {them}'s {their}")
            break
        failpoints.hit("queued-reply")
        index = len(row.record["moves"])
        try:
            canonical, notes = append_move(game, state, row.record, str(line["then"]), ctx.now, nxt)
        except MoveError as exc:
            _dropped(after, nxt, f"your queued reply {line['then']} to {their} is no longer legal: {exc}")
            break
        row.record["moves"][index]["queued"] = True
        after.followed.append((nxt, partial(_replied, canonical)))
        after.lines += notes
        after.tell.append(nxt)
        ctx.outcomes.append(f"queued reply {canonical}")
    for other, entry in list(queues.items()):
        if entry.get("ply") != state.ply:  # the game moved on without their turn coming
            del queues[other]
            _dropped(after, other, "the game moved on before your turn came")
    _keep(row, queues)
    return after


def _replied(move: str) -> str:
    return _("replied {move} (queued)").format(move=move)


def _dropped(after: hooks.AfterMove, seat: str, why: str) -> None:
    after.private.setdefault(seat, []).append(f"Your queued moves were not played and are dropped: "
                                              f"{why}.")


def _keep(row: GameRow, queues: dict[str, Any]) -> None:
    if queues:
        row.record["queue"] = queues
    else:
        row.record.pop("queue", None)


def drop_stale(ctx: MailContext, row: GameRow, state: State) -> None:
    """Any other change of position (an undo, a rollback, a drop, the end) makes a queue moot."""
    queues: dict[str, Any] = row.record.get("queue") or {}
    if queues:
        active = row.status == "active" and not state.is_over
        _keep(row, {s: e for s, e in queues.items() if active and e.get("ply") == state.ply})


HELP_TOPICS["queue"] = lambda: HELP
register_verb("queue", USAGE, parse_queue)
register_handler("queue", do_queue)
hooks.MOVE_APPLIED.insert(0, play_queued)  # before a proposal lapses, so it sees both moves
hooks.GAME_SAVED.append(drop_stale)

__all__ = ["do_queue", "drop_stale", "parse_queue", "play_queued"]
