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
from pbem.i18n import N_, _, ngettext, status_word
from pbem.outbox.compose import Section
from pbem.processing import hooks
from pbem.processing.context import MailContext
from pbem.processing.gamemail import game_names, who
from pbem.processing.games import CommandFailed, authenticate, game_id_of, load_game, refuse_if_dropped
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
    return _("in {title} something is drawn after their move, so your next move "
             "depends on what nobody has seen yet: a queued move cannot name it. Wait for your turn "
             "(or try one with: preview GAME MOVE).").format(title=get_game(row.game).title)


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
    where = _("queue line {number} ({text})").format(number=number, text=repr(text.strip()))
    match = _LINE.match(text)
    if match is None:
        raise CommandFailed(f"{where}: " + _("write 'if THEIR-MOVE then MY-MOVE' or 'then MY-MOVE'."))
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
            raise CommandFailed(f"{where}: " + _("{their} is not a move {them} can make now: {error}").format(
                their=repr(their), them=them, error=exc)) from None
        if trial.is_over:
            raise CommandFailed(f"{where}: " + _(
                "{their} would end the game; there is nothing to reply.").format(their=their_text))
        if trial.pending_chance() is not None:
            raise CommandFailed(f"{where}: " + _hidden(row))
        if trial.to_move != seat:
            raise CommandFailed(f"{where}: " + _(
                "after {their} it is not your move ({player} moves next).").format(
                their=their_text, player=who(trial.to_move, seat, names)))
        try:
            mine = _reply_after(trial, match.group("mine"), seat)
        except MoveError as exc:
            raise CommandFailed(f"{where}: " + _("after {their}, {mine} would not be legal: {error}").format(
                their=their_text, mine=repr(match.group("mine")), error=exc)) from None
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
            raise CommandFailed(f"{where}: " + _(
                "whatever {them} does, it will not be your move next.").format(them=them))
        raise CommandFailed(f"{where}: " + _("{mine} would not be legal after any move {them} can make: "
                                             "{error}").format(mine=repr(mine_text), them=them, error=error))
    return {"if": None, "then": mine, "refused_after": refused_after}


def _listing(entry: dict[str, Any]) -> list[str]:
    return [f"  if {line['if']} then {line['then']}" if line.get("if") else f"  then {line['then']}"
            for line in entry.get("lines", [])]


def _warnings(entry: dict[str, Any]) -> list[str]:
    return [_("Note: {mine} would not be legal if they play {their} (for example); it is checked again "
              "when it is used.").format(mine=line["then"], their=line["refused_after"])
            for line in entry.get("lines", []) if line.get("refused_after")]


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
            raise CommandFailed(_("you have no queued moves in game {id}.").format(id=row.id))
        queues.pop(seat.seat, None)
        _save_queues(ctx, row, queues)
        ctx.reply(None, row.id, headline=_("Your queued moves for {id} are cleared").format(id=row.id))
        return
    if not lines:
        if mine is None:
            ctx.reply(Section(lines=[_("To queue an answer to your opponent's next move, send:"),
                                     f"  queue {row.id}", "  if THEIR-MOVE then MY-MOVE",
                                     _("'help queue' explains more.")]),
                      row.id, headline=_("You have no queued moves in {id}").format(id=row.id))
        else:
            count = len(mine["lines"])
            ctx.reply(Section(lines=[*_listing(mine), _("To empty it: queue {id} clear").format(id=row.id)]),
                      row.id, headline=ngettext("Your queue for {id}: {n} line",
                                                "Your queue for {id}: {n} lines", count).format(
                                                    id=row.id, n=count))
        return
    _check_seat(row, state, seat, names)
    if len(lines) > MAX_LINES:
        raise CommandFailed(_("a queue holds at most {most} lines; you sent {n}.").format(
            most=MAX_LINES, n=len(lines)))
    checked = [_check_line(row, state, seat.seat, i, text, names) for i, text in enumerate(lines, 1)]
    replaced = mine is not None
    queues[seat.seat] = {"ply": state.ply, "at": iso(ctx.now), "lines": checked}
    _save_queues(ctx, row, queues)
    ctx.outcomes.append(f"queued {len(checked)} line(s)")
    mover = names.get(state.to_move or "", state.to_move or "")
    ctx.reply(Section(lines=[
        *_listing(queues[seat.seat]), *_warnings(queues[seat.seat]),
        _("When {player} moves, the first line that answers the move is played at once as your move "
          "(move {number}), after a check against the rules. Nobody else sees your queue.").format(
            player=mover, number=state.ply + 2),
        (_("It replaces your earlier queue.") + " " if replaced else "")
        + _("To see it: queue {id}. To empty it: queue {id} clear").format(id=row.id)]),
        row.id, headline=ngettext("Queued for {id}: {n} line, played when {player} moves",
                                  "Queued for {id}: {n} lines, played when {player} moves",
                                  len(checked)).format(id=row.id, n=len(checked), player=mover))


def _check_seat(row: GameRow, state: State, seat: Seat, names: dict[str, str]) -> None:
    if row.status != "active":
        raise CommandFailed(_("game {id} is {status}; moves are queued only in running games.").format(
            id=row.id, status=status_word(row.status)))
    refuse_if_dropped(row, state, seat)
    if state.to_move == seat.seat:
        raise CommandFailed(_("it is your turn in game {id} now: send the move itself (a queue "
                              "answers your opponent's next move).").format(id=row.id))


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
            _dropped(ctx, row, after, nxt, N_("it was written for an earlier position of the game"))
            break
        line = next((item for item in entry.get("lines", []) if item.get("if") in (None, their)), None)
        if line is None:
            _dropped(ctx, row, after, nxt, N_("none of its lines answers {them}'s {their}"), them=them,
                     their=their)
            break
        failpoints.hit("queued-reply")
        index = len(row.record["moves"])
        try:
            canonical, notes = append_move(game, state, row.record, str(line["then"]), ctx.now, nxt)
        except MoveError as exc:
            _dropped(ctx, row, after, nxt,
                     N_("your queued reply {mine} to {their} is no longer legal: {error}"),
                     mine=line["then"], their=their, error=exc)
            break
        row.record["moves"][index]["queued"] = True
        after.followed.append((nxt, partial(_replied, canonical)))
        after.lines += notes
        after.tell.append(nxt)
        ctx.outcomes.append(f"queued reply {canonical}")
    for other, entry in list(queues.items()):
        if entry.get("ply") != state.ply:  # the game moved on without their turn coming
            del queues[other]
            _dropped(ctx, row, after, other, N_("the game moved on before your turn came"))
    _keep(row, queues)
    return after


def _replied(move: str) -> str:
    return _("replied {move} (queued)").format(move=move)


def _dropped(ctx: MailContext, row: GameRow, after: hooks.AfterMove, seat: str, why: str,
             **values: Any) -> None:
    """Read by ``seat`` alone, so written in their language (the mover may speak another)."""
    with ctx.speaking_to(next((s.email for s in row.seats if s.seat == seat), None)):
        after.private.setdefault(seat, []).append(
            _("Your queued moves were not played and are dropped: {why}.").format(
                why=_(why).format(**values)))


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
