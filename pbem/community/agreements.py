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
from pbem.i18n import N_
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
from pbem.processing.games import CommandFailed, announce_end, authenticate, game_id_of, load_game
from pbem.processing.handlers import register_handler
from pbem.record import iso
from pbem.store.base import GameRow, Seat

KINDS = {"draw": "a draw", "abandon": "to abandon the game"}
PROPOSALS = {"draw": "proposal of a draw", "abandon": "proposal to abandon the game"}
RESULTS = {"draw": "agreed draw", "abandon": "abandoned by agreement"}
USAGE_PROPOSE = N_("propose GAME draw|abandon   (end the game by agreement; not a move)")
USAGE_REJECT = N_("reject GAME   (refuse a proposal to end the game)")
USAGE_WITHDRAW = N_("withdraw GAME   (take back your proposal, or your open challenge)")
MEANING = {
    "draw": "the game ends as a draw: equal standing for every player, rated as a draw",
    "abandon": "the game ends with no winner and is not rated",
}


def parse_propose(line: str, rest: list[str], in_game_reply: bool) -> Command | CommandError:
    words = list(rest)
    game = words.pop(0).lower() if words and GAME_ID.match(words[0]) else None
    if len(words) != 1 or words[0].lower() not in KINDS:
        return CommandError(line, f"propose what? {USAGE_PROPOSE}")
    return Command("propose", line, game=game, args={"what": words[0].lower()})


# --- helpers -----------------------------------------------------------------------------------------

def _playing(row: GameRow, state: State) -> list[Seat]:
    return [s for s in row.seats if s.seat not in state.dropped_seats]


def _pending(row: GameRow, state: State) -> dict[str, Any] | None:
    proposal = row.record.get("proposal")
    return proposal if isinstance(proposal, dict) and proposal.get("ply") == state.ply else None


def _describe(proposal: dict[str, Any]) -> str:
    return KINDS.get(str(proposal.get("what")), "an end by agreement")


def _proposal(proposal: dict[str, Any]) -> str:
    return PROPOSALS.get(str(proposal.get("what")), "proposal")


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
        return CommandFailed(f"nobody has proposed to end game {row.id}. To propose it: "
                             f"propose {row.id} draw (or abandon).")
    seat = str(last.get("seat"))
    what = f"{names.get(seat, seat)}'s {_proposal(last)}"
    outcome = last.get("outcome")
    if outcome == "lapsed":
        mover = str(last.get("lapsed_by", "a player"))
        return CommandFailed(f"{what} lapsed when {names.get(mover, mover)} moved; nothing is "
                             f"pending in game {row.id}. A new one: propose {row.id} draw (or abandon).")
    return CommandFailed(f"{what} was {outcome}; nothing is pending in game {row.id}.")


def tell(ctx: MailContext, row: GameRow, state: State, seat: Seat, event: str, lines: list[str],
         actions: list[ActionGroup] | None = None) -> None:
    """News about the game for one player; the one to move gets it as "Your move" with the board,
    since their reply may well be a move."""
    names = game_names(ctx.tx, row)
    sections = [Section(lines=list(lines), actions=actions or [])]
    if state.to_move == seat.seat and row.status == "active":
        headline = f"Your move (move {state.ply + 1}). {event}"
        sections.append(board_section(state, seat.seat, [scores_line(state, seat.seat, names)]))
    else:
        headline = event
        sections[0].lines += [scores_line(state, seat.seat, names),
                              f"{who(state.to_move, seat.seat, names)} is to move."]
    ctx.planned.append(PlannedMail(to=seat.email, seat=seat.seat, game_id=row.id, kind=EVENT,
                                   headline=headline, sections=sections))


def answer(ctx: MailContext, row: GameRow, state: State, seat: Seat, headline: str, lines: list[str],
           actions: list[ActionGroup] | None = None) -> None:
    """The reply to a player's command that leaves the turn where it was: when it is theirs, the
    reply says so and carries the board, so that answering it with a move works."""
    ctx.reply(Section(lines=list(lines), actions=actions or []), row.id,
              headline=headline if state.to_move != seat.seat or row.status != "active"
              else f"{headline}. Your move (move {state.ply + 1}) meanwhile")
    if state.to_move == seat.seat and row.status == "active":
        names = game_names(ctx.tx, row)
        ctx.reply(board_section(state, seat.seat, [scores_line(state, seat.seat, names)]))


def _running(ctx: MailContext, command: Command) -> tuple[GameRow, State, Seat]:
    row, state = load_game(ctx, game_id_of(ctx, command))
    seat = authenticate(ctx, row, command)
    if row.status != "active":
        raise CommandFailed(f"game {row.id} is {row.status}; only a running game can end by agreement.")
    if seat.seat in state.dropped_seats:
        raise CommandFailed(f"you were dropped from game {row.id} at a deadline; it goes on without you.")
    return row, state, seat


# --- commands ----------------------------------------------------------------------------------------

def do_propose(ctx: MailContext, command: Command) -> None:
    row, state, seat = _running(ctx, command)
    what = command.args["what"]
    names = game_names(ctx.tx, row)
    pending = _pending(row, state)
    if pending is not None:
        if pending.get("seat") == seat.seat:
            raise CommandFailed(f"you have already proposed {_describe(pending)} in game {row.id}; wait "
                                f"for the answer, or take it back: withdraw {row.id}")
        raise CommandFailed(f"{names.get(pending['seat'], pending['seat'])} has proposed "
                            f"{_describe(pending)} in game {row.id}; answer it first: accept {row.id} "
                            f"or reject {row.id}")
    others = [s for s in _playing(row, state) if s.seat != seat.seat]
    row.record["proposal"] = {"what": what, "seat": seat.seat, "by": seat.email, "at": iso(ctx.now),
                              "ply": state.ply, "accepted": []}
    row.updated_at = ctx.now
    ctx.tx.save_game(row)
    ctx.outcomes.append(f"{seat.seat} proposed {what}")
    waiting = ", ".join(names.get(s.seat, s.email) for s in others)
    everyone = "every other player accepts" if len(others) > 1 else f"{waiting} accepts"
    answer(ctx, row, state, seat, f"You proposed {KINDS[what]} in {row.id}; waiting for {waiting}", [
        f"If {everyone}, {MEANING[what]}. It lapses when anyone moves; it does not change whose turn "
        "it is.", f"To take it back, send: withdraw {row.id}"],
        [ActionGroup("", [Action("Withdraw", f"withdraw {row.id}")])])
    proposer = names.get(seat.seat, seat.email)
    notes = [f"{proposer}: {line}" for line in command.note if line.strip()]
    lines = [f"{proposer} proposes {KINDS[what]}: if "
             + ("every player still in the game accepts" if len(others) > 1 else "you accept")
             + f", {MEANING[what]}.", *notes,
             f"To agree, reply: accept {row.id}", f"To refuse, reply: reject {row.id}",
             "A move by anyone also ends the proposal; it does not change whose turn it is."]
    answers = [ActionGroup("", [Action("Accept", f"accept {row.id}"), Action("Reject", f"reject {row.id}")])]
    for other in others:
        tell(ctx, row, state, other, f"{proposer} proposes {KINDS[what]} in {row.id}", lines, answers)


def do_accept(ctx: MailContext, command: Command) -> None:
    """``accept GAME``: the answer to a proposal in a running game, else to an invitation."""
    game_id = command.game or ctx.context_game
    loaded = ctx.load(game_id) if game_id else None
    if loaded is None or loaded[0].status != "active":
        _accept_invitation(ctx, command)
        return
    row, state, seat, names, proposal = _answering(ctx, command)
    if proposal["seat"] == seat.seat:
        raise CommandFailed(f"this is your own proposal; the other players answer it. To take it "
                            f"back: withdraw {row.id}")
    accepted = proposal.setdefault("accepted", [])
    if seat.seat not in accepted:
        accepted.append(seat.seat)
    waiting = [s for s in _playing(row, state) if s.seat != proposal["seat"] and s.seat not in accepted]
    if waiting:
        row.updated_at = ctx.now
        ctx.tx.save_game(row)
        answer(ctx, row, state, seat, f"You accepted {_describe(proposal)} in {row.id}", [
            "It is agreed when " + ", ".join(names.get(s.seat, s.email) for s in waiting)
            + " accept(s) as well."])
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
    agreed = (f"{names.get(proposal['seat'], proposal['seat'])} proposed {KINDS[what]}; "
              + ", ".join(names.get(s, s) for s in accepted) + " accepted.")
    ctx.reply(result_section(row, state), row.id, headline=result_headline(row, state, seat.seat, names))
    ctx.reply(Section(lines=[agreed]))
    ctx.attach_record = True
    announce_end(ctx, row, state, exclude=seat.seat, note=[agreed])


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
        raise CommandFailed(f"this is your own proposal; to take it back, send: withdraw {row.id}")
    _close(ctx, row, state, "rejected", answered_by=seat.seat)
    row.updated_at = ctx.now
    ctx.tx.save_game(row)
    ctx.outcomes.append(f"{seat.seat} rejected {proposal['what']}")
    proposer = names.get(proposal["seat"], proposal["seat"])
    answer(ctx, row, state, seat, f"You rejected {proposer}'s {_proposal(proposal)} in {row.id}",
           ["The game goes on."])
    rejecter = names.get(seat.seat, seat.email)
    others = [s for s in _playing(row, state) if s.seat != seat.seat]
    for other in others:
        whose = "your" if other.seat == proposal["seat"] else f"{proposer}'s"
        tell(ctx, row, state, other, f"{rejecter} rejected {whose} proposal in {row.id}; the game goes on",
             [f"{rejecter} does not agree to {_describe(proposal)}."])


def withdraw_proposal(ctx: MailContext, command: Command) -> None:
    row, state, seat, names, proposal = _answering(ctx, command)
    if proposal["seat"] != seat.seat:
        raise CommandFailed(f"only {names.get(proposal['seat'], proposal['seat'])}, who proposed it, can "
                            f"withdraw it; to refuse it, send: reject {row.id}")
    _close(ctx, row, state, "withdrawn")
    row.updated_at = ctx.now
    ctx.tx.save_game(row)
    ctx.outcomes.append(f"{seat.seat} withdrew {proposal['what']}")
    answer(ctx, row, state, seat, f"You withdrew your {_proposal(proposal)} in {row.id}",
           ["The game goes on."])
    proposer = names.get(seat.seat, seat.email)
    others = [s for s in _playing(row, state) if s.seat != seat.seat]
    for other in others:
        tell(ctx, row, state, other, f"{proposer} withdrew the proposal in {row.id}; the game goes on",
             [f"{proposer} no longer proposes {_describe(proposal)}."])


# --- lapsing -----------------------------------------------------------------------------------------

def lapse_on_move(ctx: MailContext, row: GameRow, state: State, seat: str) -> hooks.AfterMove | None:
    """A move ends a pending proposal; everyone learns it with the move."""
    proposal = row.record.get("proposal")
    if not isinstance(proposal, dict) or proposal.get("ply") == state.ply:
        return None
    names = game_names(ctx.tx, row)
    _close(ctx, row, state, "lapsed", lapsed_by=seat)
    proposer = names.get(proposal.get("seat", ""), proposal.get("seat", ""))
    return hooks.AfterMove(lines=[f"{proposer}'s {_proposal(proposal)} lapsed with this move."])


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
