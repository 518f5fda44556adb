"""Ending a game by agreement: ``propose GAME draw|abandon``, answered with ``accept GAME`` or
``reject GAME``; the proposer may ``withdraw GAME`` it.

A proposal is not a move: it does not pass the turn, and the game goes on while it waits. It is
accepted when every other player still in the game has accepted it, and it lapses when anyone moves
(a move says "play on" better than any answer). A draw ends the game with equal standing for every
seat still playing (the result's reason "agreed draw"; rated as a draw); an abandoned game ends with
no winner and counts for nobody ("abandoned by agreement"; not rated).

The pending proposal lives in ``record["proposal"]``; how it ended (accepted, rejected, withdrawn,
lapsed) goes into ``record["actions"]``, so the record tells the whole story and ``pbem replay``
shows it. ``accept GAME`` stays the answer to an invitation too: which one it is follows from the
game's status.
"""

from __future__ import annotations

from typing import Any

from engine import State
from pbem.commands.parsing import GAME_ID, USAGE, Command, CommandError, game_verb_parser, register_verb
from pbem.community.moderation import record_action
from pbem.i18n import N_, _, ngettext, pgettext, status_word
from pbem.outbox.compose import Action, ActionGroup, Section
from pbem.processing import hooks, invitations
from pbem.processing.context import EVENT, MailContext, PlannedMail
from pbem.processing.gamemail import (
    board_section,
    game_names,
    result_headline,
    result_section,
    scores_line,
    who,
)
from pbem.processing.games import (
    CommandFailed,
    announce_end,
    authenticate,
    game_id_of,
    load_game,
    refuse_if_dropped,
)
from pbem.processing.handlers import register_handler
from pbem.record import iso
from pbem.store.base import GameRow, Seat

KINDS = {"draw": "a draw", "abandon": "to abandon the game"}  # in the reader's words: _kind()
PROPOSALS = {"draw": N_("proposal of a draw"), "abandon": N_("proposal to abandon the game")}
RESULTS = {"draw": "agreed draw", "abandon": "abandoned by agreement"}
USAGE_PROPOSE = N_("propose GAME draw|abandon   (end the game by agreement; not a move)")
USAGE_REJECT = N_("reject GAME   (refuse a proposal to end the game)")
USAGE_WITHDRAW = N_("withdraw GAME   (take back your proposal, or your open challenge)")
MEANING = {
    "draw": N_("the game ends as a draw: equal standing for every player, rated as a draw"),
    "abandon": N_("the game ends with no winner and is not rated"),
}


def parse_propose(line: str, rest: list[str], in_game_reply: bool) -> Command | CommandError:
    words = list(rest)
    game = words.pop(0).lower() if words and GAME_ID.match(words[0]) else None
    if len(words) != 1 or words[0].lower() not in KINDS:
        return CommandError(line, _("propose what? {usage}").format(usage=_(USAGE_PROPOSE)))
    return Command("propose", line, game=game, args={"what": words[0].lower()})


# --- helpers -----------------------------------------------------------------------------------------

def _playing(row: GameRow, state: State) -> list[Seat]:
    return [s for s in row.seats if s.seat not in state.dropped_seats]


def _pending(row: GameRow, state: State) -> dict[str, Any] | None:
    proposal = row.record.get("proposal")
    return proposal if isinstance(proposal, dict) and proposal.get("ply") == state.ply else None


def _describe(proposal: dict[str, Any]) -> str:
    what = str(proposal.get("what"))
    return _kind(what) if what in KINDS else _("an end by agreement")


def _kind(what: str) -> str:
    """What is proposed, as the object of "proposes": its own translation (a case of its own)."""
    return pgettext("proposed", "a draw") if what == "draw" else pgettext("proposed", "to abandon the game")


def _proposal(proposal: dict[str, Any]) -> str:
    kind = PROPOSALS.get(str(proposal.get("what")), N_("proposal"))
    return _(kind)


def _close(ctx: MailContext, row: GameRow, state: State, outcome: str, **details: Any) -> dict[str, Any]:
    """The proposal is over: its outcome goes into the record's actions."""
    proposal = row.record.pop("proposal")
    record_action(row, "proposal", proposal.get("by", ""), "", ctx.now, state.ply,
                  seat=proposal.get("seat"), what=proposal.get("what"), outcome=outcome,
                  proposed_at=proposal.get("at"), **details)
    return proposal


def _nothing_pending(row: GameRow, names: dict[str, str]) -> CommandFailed:
    """Why there is nothing to answer: the last proposal's fate, when there was one."""
    last = next((a for a in reversed(row.record.get("actions") or [])
                 if isinstance(a, dict) and a.get("action") == "proposal"), None)
    if last is None:
        return CommandFailed(_("nobody has proposed to end game {id}. To propose it: propose {id} draw "
                               "(or abandon).").format(id=row.id))
    seat = str(last.get("seat"))
    what = _("{player}'s {proposal}").format(player=names.get(seat, seat), proposal=_proposal(last))
    outcome = last.get("outcome")
    if outcome == "lapsed":
        mover = str(last.get("lapsed_by", _("a player")))
        return CommandFailed(_("{what} lapsed when {player} moved; nothing is pending in game {id}. A new "
                               "one: propose {id} draw (or abandon).").format(
            what=what, player=names.get(mover, mover), id=row.id))
    return CommandFailed(_("{what} was {outcome}; nothing is pending in game {id}.").format(
        what=what, outcome=status_word(str(outcome)), id=row.id))


def tell(ctx: MailContext, row: GameRow, state: State, seat: Seat, event: str, lines: list[str],
         actions: list[ActionGroup] | None = None) -> None:
    """News about the game for one player; the one to move gets it as "Your move" with the board,
    since their reply may well be a move."""
    names = game_names(ctx.tx, row)
    sections = [Section(lines=list(lines), actions=actions or [])]
    if state.to_move == seat.seat and row.status == "active":
        headline = _("Your move (move {number}).").format(number=state.ply + 1) + f" {event}"
        sections.append(board_section(state, seat.seat, [scores_line(state, seat.seat, names)]))
    else:
        headline = event
        sections[0].lines += [scores_line(state, seat.seat, names),
                              _("{player} is to move.").format(player=who(state.to_move, seat.seat, names))]
    ctx.planned.append(PlannedMail(to=seat.email, seat=seat.seat, game_id=row.id, kind=EVENT,
                                   headline=headline, sections=sections))


def answer(ctx: MailContext, row: GameRow, state: State, seat: Seat, headline: str, lines: list[str],
           actions: list[ActionGroup] | None = None) -> None:
    """The reply to a player's command that leaves the turn where it was: when it is theirs, the
    reply says so and carries the board, so that answering it with a move works."""
    ctx.reply(Section(lines=list(lines), actions=actions or []), row.id,
              headline=headline if state.to_move != seat.seat or row.status != "active"
              else _("{headline}. Your move (move {number}) meanwhile").format(
                  headline=headline, number=state.ply + 1))
    if state.to_move == seat.seat and row.status == "active":
        names = game_names(ctx.tx, row)
        ctx.reply(board_section(state, seat.seat, [scores_line(state, seat.seat, names)]))


def _running(ctx: MailContext, command: Command) -> tuple[GameRow, State, Seat]:
    row, state = load_game(ctx, game_id_of(ctx, command))
    seat = authenticate(ctx, row, command)
    if row.status != "active":
        raise CommandFailed(_("game {id} is {status}; only a running game can end by agreement.").format(
            id=row.id, status=status_word(row.status)))
    refuse_if_dropped(row, state, seat)
    return row, state, seat


# --- commands ----------------------------------------------------------------------------------------

def do_propose(ctx: MailContext, command: Command) -> None:
    row, state, seat = _running(ctx, command)
    what = command.args["what"]
    names = game_names(ctx.tx, row)
    pending = _pending(row, state)
    if pending is not None:
        if pending.get("seat") == seat.seat:
            raise CommandFailed(_("you have already proposed {what} in game {id}; wait for the answer, or "
                                  "take it back: withdraw {id}").format(what=_describe(pending), id=row.id))
        raise CommandFailed(_("{player} has proposed {what} in game {id}; answer it first: accept {id} or "
                              "reject {id}").format(player=names.get(pending["seat"], pending["seat"]),
                                                    what=_describe(pending), id=row.id))
    others = [s for s in _playing(row, state) if s.seat != seat.seat]
    row.record["proposal"] = {"what": what, "seat": seat.seat, "by": seat.email, "at": iso(ctx.now),
                              "ply": state.ply, "accepted": []}
    row.updated_at = ctx.now
    ctx.tx.save_game(row)
    ctx.outcomes.append(f"{seat.seat} proposed {what}")
    waiting = ", ".join(names.get(s.seat, s.email) for s in others)
    everyone = (_("every other player accepts") if len(others) > 1
                else _("{player} accepts").format(player=waiting))
    answer(ctx, row, state, seat, _("You proposed {what} in {id}; waiting for {players}").format(
        what=_kind(what), id=row.id, players=waiting), [
        _("If {who}, {meaning}. It lapses when anyone moves; it does not change whose turn it is.").format(
            who=everyone, meaning=_(MEANING[what])),
        _("To take it back, send: withdraw {id}").format(id=row.id)],
        [ActionGroup("", [Action(_("Withdraw"), f"withdraw {row.id}")])])
    proposer = names.get(seat.seat, seat.email)
    notes = [f"{proposer}: {line}" for line in command.note if line.strip()]
    for other in others:
        with ctx.speaking_to(other.email):
            lines = [_("{player} proposes {what}: if {who}, {meaning}.").format(
                         player=proposer, what=_kind(what), meaning=_(MEANING[what]),
                         who=(_("every player still in the game accepts") if len(others) > 1
                              else _("you accept"))),
                     *notes,
                     _("To agree, reply: accept {id}").format(id=row.id),
                     _("To refuse, reply: reject {id}").format(id=row.id),
                     _("A move by anyone also ends the proposal; it does not change whose turn it is.")]
            answers = [ActionGroup("", [Action(_("Accept"), f"accept {row.id}"),
                                        Action(_("Reject"), f"reject {row.id}")])]
            tell(ctx, row, state, other, _("{player} proposes {what} in {id}").format(
                player=proposer, what=_kind(what), id=row.id), lines, answers)


def do_accept(ctx: MailContext, command: Command) -> None:
    """``accept GAME``: the answer to a proposal in a running game, else to an invitation."""
    game_id = command.game or ctx.context_game
    loaded = ctx.load(game_id) if game_id else None
    if loaded is None or loaded[0].status != "active":
        _accept_invitation(ctx, command)
        return
    row, state, seat, names, proposal = _answering(ctx, command)
    if proposal["seat"] == seat.seat:
        raise CommandFailed(_("this is your own proposal; the other players answer it. To take it back: "
                              "withdraw {id}").format(id=row.id))
    accepted = proposal.setdefault("accepted", [])
    if seat.seat not in accepted:
        accepted.append(seat.seat)
    waiting = [s for s in _playing(row, state) if s.seat != proposal["seat"] and s.seat not in accepted]
    if waiting:
        row.updated_at = ctx.now
        ctx.tx.save_game(row)
        answer(ctx, row, state, seat, _("You accepted {what} in {id}").format(
            what=_describe(proposal), id=row.id), [
            ngettext("It is agreed when {players} accepts as well.",
                     "It is agreed when {players} accept as well.", len(waiting)).format(
                players=", ".join(names.get(s.seat, s.email) for s in waiting))])
        return
    what = str(proposal["what"])
    _close(ctx, row, state, "accepted", accepted_by=list(accepted))
    result: dict[str, Any] = {"reason": RESULTS[what], "at": iso(ctx.now), "proposed_by": proposal["seat"]}
    if what == "draw":
        result.update(winners=[s.seat for s in _playing(row, state)], totals=dict(state.score().totals))
    else:
        result["winners"] = []
    row.record["result"] = result
    row.status = "over"
    row.to_move = None
    row.updated_at = row.finished_at = ctx.now
    for hook in hooks.GAME_SAVED:
        hook(ctx, row, state)
    ctx.tx.save_game(row)
    ctx.touched[row.id] = (row, state)
    ctx.outcomes.append(f"{RESULTS[what]} in {row.id}")
    def agreed() -> list[str]:
        return [_("{player} proposed {what}; {players} accepted.").format(
            player=names.get(proposal["seat"], proposal["seat"]), what=_kind(what),
            players=", ".join(names.get(s, s) for s in accepted))]
    ctx.reply(result_section(row, state), row.id, headline=result_headline(row, state, seat.seat, names))
    ctx.reply(Section(lines=agreed()))
    ctx.attach_record = True
    announce_end(ctx, row, state, exclude=seat.seat, note=agreed)


def _answering(ctx: MailContext, command: Command
               ) -> tuple[GameRow, State, Seat, dict[str, str], dict[str, Any]]:
    """The game, its state, the sender's seat, the players' names and the pending proposal."""
    row, state, seat = _running(ctx, command)
    names = game_names(ctx.tx, row)
    proposal = _pending(row, state)
    if proposal is None:
        raise _nothing_pending(row, names)
    return row, state, seat, names, proposal


def do_reject(ctx: MailContext, command: Command) -> None:
    row, state, seat, names, proposal = _answering(ctx, command)
    if proposal["seat"] == seat.seat:
        raise CommandFailed(_("this is your own proposal; to take it back, send: withdraw {id}").format(
            id=row.id))
    _close(ctx, row, state, "rejected", answered_by=seat.seat)
    row.updated_at = ctx.now
    ctx.tx.save_game(row)
    ctx.outcomes.append(f"{seat.seat} rejected {proposal['what']}")
    proposer = names.get(proposal["seat"], proposal["seat"])
    answer(ctx, row, state, seat, _("You rejected {player}'s {proposal} in {id}").format(
        player=proposer, proposal=_proposal(proposal), id=row.id), [_("The game goes on.")])
    rejecter = names.get(seat.seat, seat.email)
    others = [s for s in _playing(row, state) if s.seat != seat.seat]
    for other in others:
        with ctx.speaking_to(other.email):
            mine = other.seat == proposal["seat"]
            event = (_("{player} rejected your proposal in {id}; the game goes on") if mine
                     else _("{player} rejected {proposer}'s proposal in {id}; the game goes on")).format(
                player=rejecter, proposer=proposer, id=row.id)
            tell(ctx, row, state, other, event, [_("{player} does not agree to {what}.").format(
                player=rejecter, what=_describe(proposal))])


def withdraw_proposal(ctx: MailContext, command: Command) -> None:
    row, state, seat, names, proposal = _answering(ctx, command)
    if proposal["seat"] != seat.seat:
        raise CommandFailed(_("only {player}, who proposed it, can withdraw it; to refuse it, send: reject "
                              "{id}").format(player=names.get(proposal["seat"], proposal["seat"]), id=row.id))
    _close(ctx, row, state, "withdrawn")
    row.updated_at = ctx.now
    ctx.tx.save_game(row)
    ctx.outcomes.append(f"{seat.seat} withdrew {proposal['what']}")
    answer(ctx, row, state, seat, _("You withdrew your {proposal} in {id}").format(
        proposal=_proposal(proposal), id=row.id), [_("The game goes on.")])
    proposer = names.get(seat.seat, seat.email)
    others = [s for s in _playing(row, state) if s.seat != seat.seat]
    for other in others:
        with ctx.speaking_to(other.email):
            tell(ctx, row, state, other, _("{player} withdrew the proposal in {id}; the game goes on").format(
                player=proposer, id=row.id), [_("{player} no longer proposes {what}.").format(
                    player=proposer, what=_describe(proposal))])


# --- lapsing -----------------------------------------------------------------------------------------

def lapse_on_move(ctx: MailContext, row: GameRow, state: State, seat: str) -> hooks.AfterMove | None:
    """A move ends a pending proposal; everyone learns it with the move."""
    proposal = row.record.get("proposal")
    if not isinstance(proposal, dict) or proposal.get("ply") == state.ply:
        return None
    names = game_names(ctx.tx, row)
    _close(ctx, row, state, "lapsed", lapsed_by=seat)
    proposer = names.get(proposal.get("seat", ""), proposal.get("seat", ""))
    return hooks.AfterMove(lines=[lambda: _("{player}'s {proposal} lapsed with this move.").format(
        player=proposer, proposal=_proposal(proposal))])


def lapse_on_change(ctx: MailContext, row: GameRow, state: State) -> None:
    """Any other change of position (an undo, a rollback, a drop) or the end of the game ends it
    too, without a word: those changes are announced by themselves."""
    proposal = row.record.get("proposal")
    if isinstance(proposal, dict) and (proposal.get("ply") != state.ply or row.status != "active"):
        _close(ctx, row, state, "lapsed", lapsed_by="a change of position")


_accept_invitation = invitations.do_accept
USAGE["accept"] = N_("accept GAME   (an invitation, or a proposal to end the game)")
register_verb("propose", USAGE_PROPOSE, parse_propose)
register_verb("reject", USAGE_REJECT, game_verb_parser("reject"))
register_verb("withdraw", USAGE_WITHDRAW, game_verb_parser("withdraw"))
register_handler("propose", do_propose)
register_handler("withdraw", withdraw_proposal)
register_handler("accept", do_accept)
register_handler("reject", do_reject)
hooks.MOVE_APPLIED.append(lapse_on_move)
hooks.GAME_SAVED.append(lapse_on_change)

__all__ = ["do_accept", "do_propose", "do_reject", "lapse_on_change", "lapse_on_move", "parse_propose",
           "withdraw_proposal"]
