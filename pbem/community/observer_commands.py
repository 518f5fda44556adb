"""Observers (``observe GAME``, ``unobserve GAME``) and players' take-backs (``undo GAME``,
``accept undo GAME``, ``decline undo GAME``).

Observers get the board after every move (or the daily digest, if they chose it) and the result of
every end of a game, rendered for no seat, so they never see hidden information (the Space
Truckin' draw pile). Their mails carry no
token: an observer can never act for a seat.

An undo takes back the asker's last move and any move made after it, and only once every other
player has accepted. The pending request lives in ``record["undo_request"]``; a move made meanwhile
makes it moot, so it is dropped whenever the position changes.
"""

from __future__ import annotations

from collections.abc import Callable

from engine import State, get_game, is_move_entry
from pbem.commands.parsing import Command, game_verb_parser, register_verb
from pbem.community.moderation import record_action, rewind
from pbem.i18n import N_, _, ngettext, status_word
from pbem.outbox.compose import Action, ActionGroup, Section
from pbem.processing import hooks
from pbem.processing.context import BOARD, EVENT, MailContext, PlannedMail
from pbem.processing.gamemail import (
    board_section,
    game_ended,
    game_names,
    local_move,
    players_line,
    result_headline,
    result_section,
    scores_line,
    seat_label,
    who,
)
from pbem.processing.games import (
    CommandFailed,
    announce_position,
    authenticate,
    game_id_of,
    load_game,
    save_game,
)
from pbem.processing.handlers import register_handler
from pbem.record import iso, replay_record
from pbem.store.base import GameRow

# --- observers ---------------------------------------------------------------------------------------

def do_observe(ctx: MailContext, command: Command) -> None:
    row, state = load_game(ctx, game_id_of(ctx, command))
    email = ctx.mail.from_addr
    if any(s.email == email for s in row.seats):
        raise CommandFailed(_("you play in game {id}; you get its boards anyway.").format(id=row.id))
    if row.status in ("declined", "cancelled"):
        raise CommandFailed(_("game {id} was {status}; there is nothing to watch.").format(
            id=row.id, status=status_word(row.status)))
    added = ctx.tx.add_observer(row.id, email, ctx.now)
    names = game_names(ctx.tx, row)
    headline = (_("You are now observing {id}") if added else _("You were already observing {id}")).format(
        id=row.id)
    lines = [players_line(row, None, names), _("To stop, send: unobserve {id}").format(id=row.id)]
    if row.status == "invited":
        ctx.reply(Section(lines=[*lines, _("The game has not started; you will get the board once every "
                                           "player has accepted.")]), row.id, headline=headline)
        return
    if row.status == "over":
        lines.insert(0, result_headline(row, state, None, names))
    ctx.reply(board_section(state, None, lines, with_legal=False, ended=game_ended(row)), row.id,
              headline=headline)


def do_unobserve(ctx: MailContext, command: Command) -> None:
    game_id = game_id_of(ctx, command)
    if not ctx.tx.remove_observer(game_id, ctx.mail.from_addr):
        raise CommandFailed(_("you are not observing game {id}.").format(id=game_id))
    ctx.reply(None, headline=_("You no longer observe {id}; no more mail about it").format(id=game_id))


def _observers(ctx: MailContext, row: GameRow) -> list[str]:
    seats = {s.email for s in row.seats}
    return [e for e in ctx.tx.observers(row.id) if e not in seats and not ctx.tx.is_blocked(e)]


def boards_to_observers(ctx: MailContext, row: GameRow, state: State, headline: Callable[[], str]) -> None:
    """Each observer gets the position as nobody's seat sees it (never hidden information)."""
    names = game_names(ctx.tx, row)
    for email in _observers(ctx, row):
        with ctx.speaking_to(email):
            ctx.planned.append(PlannedMail(
                to=email, game_id=row.id, kind=BOARD, observer=True,
                headline=_("{happened}; {player} is to move.").format(
                    happened=headline(), player=who(state.to_move, None, names)),
                sections=[board_section(state, None, [scores_line(state, None, names)], with_legal=False)]))


def result_to_observers(ctx: MailContext, row: GameRow, state: State, headline: Callable[[], str],
                        note: Callable[[], list[str]]) -> None:
    """However the game ended (last move, resignation, forfeit, a moderator), observers hear it,
    with what was said about it (a moderator's reason)."""
    for email in _observers(ctx, row):
        with ctx.speaking_to(email):
            ctx.planned.append(PlannedMail(
                to=email, game_id=row.id, kind=EVENT, observer=True, headline=headline(),
                sections=[board_section(state, None, note(), with_legal=False, ended=True),
                          result_section(row, state)]))


def games_watched(ctx: MailContext) -> list[Section]:
    rows = ctx.tx.games_observed(ctx.mail.from_addr)
    if not rows:
        return []
    lines = []
    for row in rows:
        turn = (_("{player} to move").format(player=row.to_move) if row.status == "active"
                else status_word(row.status))
        lines.append(f"{row.id}  {get_game(row.game).title}: {turn}")
    return [Section(title=_("Games you watch"), pre="\n".join(lines))]


# --- undo --------------------------------------------------------------------------------------------

def do_undo(ctx: MailContext, command: Command) -> None:
    row, state = load_game(ctx, game_id_of(ctx, command))
    seat = authenticate(ctx, row, command)
    if row.status != "active":
        raise CommandFailed(_("game {id} is {status}; only moves of running games can be taken back.").format(
            id=row.id, status=status_word(row.status)))
    pending = row.record.get("undo_request")
    if pending:
        raise CommandFailed(_("{seat} has already asked to take back a move in game {id}; wait for the "
                              "answer.").format(seat=seat_label(row.game, pending["seat"]), id=row.id))
    moves = [entry for entry in row.record["moves"] if is_move_entry(entry)]
    mine = [i for i, entry in enumerate(moves) if entry.get("seat") == seat.seat]
    if not mine:
        raise CommandFailed(_("you have made no move in game {id} yet.").format(id=row.id))
    count = len(moves) - mine[-1]
    entries = row.record["moves"]
    first = next(i for i, entry in enumerate(entries) if entry is moves[mine[-1]])
    if any("drop" in entry for entry in entries[first:]):
        # taking the move back would bring the dropped player back: a moderator's decision
        raise CommandFailed(_("a player was dropped from game {id} after your last move, so it cannot be "
                              "taken back by agreement; ask a moderator (rollback).").format(id=row.id))
    others = [s for s in row.seats if s.seat != seat.seat and s.seat not in state.dropped_seats]
    row.record["undo_request"] = {"seat": seat.seat, "by": seat.email, "at": iso(ctx.now),
                                  "ply": state.ply, "moves": count, "accepted": []}
    row.updated_at = ctx.now
    ctx.tx.save_game(row)
    last = moves[mine[-1]]["move"]
    before = replay_record(row.record, get_game(row.game), upto_ply=state.ply - count)
    asked_for = ngettext("You asked to take back your last move ({move}).",
                         "You asked to take back your last move ({move}) and the {n} moves after it.",
                         count).format(move=local_move(before, last), n=count - 1)
    until = ngettext("Nothing is taken back until {players} accepts; a move made meanwhile cancels the "
                     "request.",
                     "Nothing is taken back until {players} accept; a move made meanwhile cancels the "
                     "request.", len(others)).format(
        players=", ".join(seat_label(row.game, s.seat) for s in others))
    ctx.reply(Section(lines=[f"{asked_for} {until}"]), row.id,
              headline=_("Undo asked in {id}").format(id=row.id))
    names = game_names(ctx.tx, row)
    for other in others:
        with ctx.speaking_to(other.email):
            asked = ngettext(
                "{seat} ({address}) asks to take back their last move ({move}) in game {id}, going back "
                "to move {back}.", "{seat} ({address}) asks to take back their last move ({move}) and the "
                "{n} moves after it in game {id}, going back to move {back}.", count).format(
                seat=names.label(seat.seat), address=seat.email, move=local_move(before, last), n=count - 1,
                id=row.id, back=state.ply - count)
            ctx.planned.append(PlannedMail(
                to=other.email, seat=other.seat, game_id=row.id, kind=EVENT,
                headline=_("{player} asks to take back a move in {id}").format(
                    player=who(seat.seat, other.seat, names), id=row.id),
                sections=[Section(lines=[
                    asked, _("To agree, reply: accept undo {id}").format(id=row.id),
                    _("To refuse, reply: decline undo {id}").format(id=row.id),
                    _("Making your move instead also refuses it.")],
                    actions=[ActionGroup("", [Action(_("Agree"), f"accept undo {row.id}"),
                                              Action(_("Refuse"), f"decline undo {row.id}")])])]))
    ctx.outcomes.append(f"undo asked by {seat.seat}")


def _pending(ctx: MailContext, row: GameRow, state: State) -> dict:
    request = row.record.get("undo_request")
    if not request:
        raise CommandFailed(_("nobody has asked to take back a move in game {id}.").format(id=row.id))
    if request.get("ply") != state.ply:  # a move the lapse hook did not see; never act on it
        del row.record["undo_request"]
        ctx.tx.save_game(row)
        raise CommandFailed(_("the undo request of game {id} lapsed: moves were made since.").format(
            id=row.id))
    return request


def do_accept_undo(ctx: MailContext, command: Command) -> None:
    row, state = load_game(ctx, game_id_of(ctx, command))
    seat = authenticate(ctx, row, command)
    if row.status != "active":
        raise CommandFailed(_("game {id} is {status}; nothing can be taken back.").format(
            id=row.id, status=status_word(row.status)))
    request = _pending(ctx, row, state)
    if request["seat"] == seat.seat:
        raise CommandFailed(_("you asked for this undo; your opponents must accept it."))
    accepted = request.setdefault("accepted", [])
    if seat.seat not in accepted:
        accepted.append(seat.seat)
    waiting = [s.seat for s in row.seats if s.seat != request["seat"] and s.seat not in accepted
               and s.seat not in state.dropped_seats]
    if waiting:
        row.updated_at = ctx.now
        ctx.tx.save_game(row)
        ctx.reply(Section(lines=[_("Waiting for {players} to accept as well.").format(
            players=", ".join(waiting))]), row.id, headline=_("Undo accepted in {id}").format(id=row.id))
        return
    asker = next(s for s in row.seats if s.seat == request["seat"])
    removed = rewind(row.record, state.ply - request["moves"])
    del row.record["undo_request"]
    emails = {s.seat: s.email for s in row.seats}
    record_action(row, "undo", asker.email, "", ctx.now, state.ply, seat=asker.seat,
                  moves=request["moves"], accepted_by=[emails[s] for s in accepted], removed=removed)
    state = replay_record(row.record, get_game(row.game))
    save_game(ctx, row, state)
    def headline() -> str:
        return ngettext("{n} move taken back at {seat}'s request, accepted by {players}; game {id} is at "
                        "move {number} again", "{n} moves taken back at {seat}'s request, accepted by "
                        "{players}; game {id} is at move {number} again", request["moves"]).format(
            n=request["moves"], seat=seat_label(row.game, asker.seat),
            players=", ".join(seat_label(row.game, s) for s in accepted), id=row.id, number=state.ply)
    names = game_names(ctx.tx, row)
    ctx.reply(board_section(state, seat.seat, [scores_line(state, seat.seat, names)]), row.id,
              headline=(_("Your move (move {number}). {happened}.").format(
                  number=state.ply + 1, happened=headline()) if state.to_move == seat.seat
                  else _("{happened}; {player} is to move.").format(
                      happened=headline(), player=who(state.to_move, seat.seat, names))))
    ctx.outcomes.append(f"undo {request['moves']}")
    announce_position(ctx, row, state, headline, exclude=seat.seat, start=True)


def do_decline_undo(ctx: MailContext, command: Command) -> None:
    """Also how the asker withdraws the request."""
    row, state = load_game(ctx, game_id_of(ctx, command))
    seat = authenticate(ctx, row, command)
    request = _pending(ctx, row, state)
    del row.record["undo_request"]
    row.updated_at = ctx.now
    ctx.tx.save_game(row)
    withdrawn = request["seat"] == seat.seat

    def text() -> str:
        return (_("{seat} withdrew the request to take back a move in game {id}.") if withdrawn
                else _("{seat} declined to take back {asker}'s move in game {id}; the game goes on.")).format(
            seat=seat_label(row.game, seat.seat), asker=seat_label(row.game, request["seat"]), id=row.id)
    ctx.reply(None, row.id, headline=text())
    for other in row.seats:
        if other.seat != seat.seat:
            with ctx.speaking_to(other.email):
                ctx.planned.append(PlannedMail(to=other.email, seat=other.seat, game_id=row.id, kind=EVENT,
                                               headline=text()))


def lapse_undo(ctx: MailContext, row: GameRow, state: State) -> None:
    request = row.record.get("undo_request")
    if request and request.get("ply") != state.ply:
        del row.record["undo_request"]


register_verb("observe", N_("observe GAME   (get the board after every move)"), game_verb_parser("observe"))
register_verb("unobserve", "unobserve GAME", game_verb_parser("unobserve"))
register_verb("undo", N_("undo GAME   (ask your opponents to take back your last move)"),
              game_verb_parser("undo"))
register_verb("accept undo", "accept undo GAME", game_verb_parser("accept undo"))
register_verb("decline undo", "decline undo GAME", game_verb_parser("decline undo"))
register_handler("observe", do_observe)
register_handler("unobserve", do_unobserve)
register_handler("undo", do_undo)
register_handler("accept undo", do_accept_undo)
register_handler("decline undo", do_decline_undo)
hooks.BOARD_SENT.append(boards_to_observers)
hooks.GAME_ENDED.append(result_to_observers)
hooks.GAMES_LISTING.append(games_watched)
hooks.GAME_SAVED.append(lapse_undo)
