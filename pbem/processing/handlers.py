"""One function per mail command. Each adds to the reply and plans the mails it causes; none sends
or commits anything itself (the processor does both, in the mail's single transaction)."""

from __future__ import annotations

import random
import secrets
from collections.abc import Callable

from engine import EngineError, MoveError, get_game
from engine.options import parse_option_words
from engine.registry import UnknownGameError
from pbem.commands.helptext import help_text
from pbem.commands.parsing import Command
from pbem.outbox.compose import Section
from pbem.processing import hooks
from pbem.processing.context import MailContext, PlannedMail
from pbem.processing.gamemail import (
    board_section,
    players_line,
    result_lines,
    seat_label,
    subject,
)
from pbem.processing.games import (
    CommandFailed,
    authenticate,
    game_id_of,
    load_game,
    notify_players,
    save_game,
    sender_seat,
)
from pbem.record import append_move, draw_chances, iso, new_record
from pbem.store.base import GameRow, Seat
from pbem.tokens import token_hash

Handler = Callable[[MailContext, Command], None]


# --- commands ----------------------------------------------------------------------------------------

def do_help(ctx: MailContext, command: Command) -> None:
    ctx.reply(Section(title=f"help {command.topic or ''}".strip(), pre=help_text(command.topic)))


def do_games(ctx: MailContext, command: Command) -> None:
    rows = ctx.tx.games_for_email(ctx.mail.from_addr)
    lines = []
    for row in rows:
        mine = sender_seat(row)(ctx.mail.from_addr)
        game = get_game(row.game)
        if row.status == "active":
            turn = "your move" if mine and row.to_move == mine.seat else f"{row.to_move} to move"
        elif row.status == "invited":
            waiting = [s.seat for s in row.seats if not s.accepted]
            turn = "waiting for " + ", ".join(waiting) + " to accept"
        else:
            turn = row.status
        when = row.updated_at.strftime("%Y-%m-%d %H:%M UTC") if row.updated_at else "-"
        lines.append(f"{row.id:<8} {game.title:<15} you: {mine.seat if mine else '-':<6} "
                     f"{turn:<28} last activity {when}")
    if lines:
        ctx.reply(Section(title="Your games", pre="\n".join(lines)))
    else:
        ctx.reply(Section(title="Your games", lines=[
            "You have no games. Start one with: new alien-city with FRIEND@EXAMPLE.ORG"]))
    for hook in hooks.GAMES_LISTING:
        for section in hook(ctx):
            ctx.reply(section)


def do_new(ctx: MailContext, command: Command) -> None:
    try:
        game = get_game(command.game or "")
    except UnknownGameError as exc:
        raise CommandFailed(str(exc)) from None
    server_keys: dict = {}
    try:
        for take in hooks.NEW_GAME_OPTIONS:
            server_keys.update(take(command))
        raw = command.options if command.options is not None else parse_option_words(
            game, command.option_words)
        options = game.normalize_options(raw)
        seats = game.seat_names(1 + len(command.opponents))
    except EngineError as exc:
        raise CommandFailed(str(exc)) from None
    challenger = ctx.mail.from_addr
    if not challenger:
        raise CommandFailed("your mail has no From address I can answer.")
    people = [challenger, *command.opponents]
    if len(set(people)) != len(people):
        raise CommandFailed("every player must have a different address (you cannot play yourself).")
    if ctx.config.address in people:
        raise CommandFailed(f"{ctx.config.address} is the server, not a player.")
    if command.seat:
        if command.seat not in seats:
            raise CommandFailed(f"'as {command.seat}': seats are {', '.join(seats)}.")
        order = [command.seat] + [s for s in seats if s != command.seat]
    else:
        order = seats
    game_id = ctx.tx.next_game_id(game.id_prefix)
    rng = random.Random(secrets.randbits(64))
    setup = game.create_setup(options, rng, len(seats))
    names = {challenger: ctx.mail.from_name}
    assigned = dict(zip(order, people, strict=True))
    players = {seat: {"name": names.get(email, ""), "email": email} for seat, email in assigned.items()}
    record = new_record(game, options, setup, {s: players[s] for s in seats})
    record["id"] = game_id
    record["created_at"] = iso(ctx.now)
    record.update(server_keys)
    seat_rows = [Seat(seat=s, email=assigned[s], name=names.get(assigned[s], ""),
                      token_hash=token_hash(ctx.token_for(game_id, s)),
                      accepted=assigned[s] == challenger) for s in seats]
    row = GameRow(id=game_id, game=game.name, status="invited", record=record, seats=seat_rows,
                  created_at=ctx.now, updated_at=ctx.now)
    ctx.tx.insert_game(row)
    state = game.start(options, setup)
    ctx.touched[game_id] = (row, state)
    described = _describe_options(options)
    my_seat = order[0]
    ctx.reply(Section(title=f"Game {game_id} created", lines=[
        f"{game.title}, {described}. You play {my_seat}.",
        players_line(row),
        "Invitations are out; the game starts when every player has accepted.",
    ]), game_id)
    for seat in seat_rows:
        if seat.email == challenger:
            continue
        ctx.planned.append(PlannedMail(
            to=seat.email, seat=seat.seat, game_id=game_id,
            subject=subject(game_id, f"Invitation to {game.title} from {challenger}"),
            sections=[Section(title="Invitation", lines=[
                f"{seat_label(row, my_seat)} invites you to a game of {game.title} ({described}).",
                f"You would play {seat.seat}. {players_line(row)}",
                "To play, reply to this mail with the single word: accept",
                "To refuse, reply with: decline",
                f"The rules and the server's rulings: reply with 'help {game.name}'.",
            ])], attach_record=False))


def _describe_options(options: dict) -> str:
    parts = []
    for key, value in options.items():
        if value is True:
            parts.append(key.replace("_", " "))
        elif value not in (False, None, {}) and not isinstance(value, dict):
            parts.append(f"{key.replace('_', ' ')} {value}")
        elif isinstance(value, dict) and key == "handicap":
            special = [f"{seat} reach {h.get('reach')} extra claims {h.get('extra_claims')}"
                       for seat, h in value.items() if h != {"reach": 2, "extra_claims": 0}]
            if special:
                parts.append("handicap " + "; ".join(special))
    return ", ".join(parts) or "standard rules"


def do_accept(ctx: MailContext, command: Command) -> None:
    row, state = load_game(ctx, game_id_of(ctx, command))
    seat = authenticate(ctx, row, command)
    if row.status != "invited":
        raise CommandFailed(f"game {row.id} is {row.status}; there is nothing to accept.")
    if seat.accepted:
        raise CommandFailed(f"you have already accepted game {row.id}.")
    seat.accepted = True
    game = get_game(row.game)
    if not all(s.accepted for s in row.seats):
        waiting = ", ".join(s.email for s in row.seats if not s.accepted)
        ctx.tx.save_game(row)
        ctx.reply(Section(title=f"Accepted {row.id}", lines=[f"Waiting for {waiting} to accept."]),
                  row.id)
        return
    row.status = "active"
    row.record["started_at"] = iso(ctx.now)
    notes = draw_chances(game, state, row.record, ctx.now)
    save_game(ctx, row, state)
    headline = f"Game {row.id} ({game.title}) has started. " + " ".join(notes)
    title = f"Your move (ply {state.ply})" if state.to_move == seat.seat else f"Game {row.id} started"
    ctx.reply(board_section(state, seat.seat, title, [
        headline.strip(), f"You play {seat.seat}.",
        "It is your move." if state.to_move == seat.seat else f"{state.to_move} moves first."]), row.id)
    notify_players(ctx, row, state, seat.seat, headline.strip())


def do_decline(ctx: MailContext, command: Command) -> None:
    row, _state = load_game(ctx, game_id_of(ctx, command))
    seat = authenticate(ctx, row, command)
    if row.status != "invited":
        raise CommandFailed(f"game {row.id} is {row.status}; only invitations can be declined.")
    row.status = "declined"
    row.updated_at = row.finished_at = ctx.now
    row.record["result"] = {"reason": "declined", "by": seat.seat, "at": iso(ctx.now)}
    ctx.tx.save_game(row)
    ctx.reply(Section(title=f"Declined {row.id}", lines=["The game is cancelled."]), row.id)
    for other in row.seats:
        if other.seat != seat.seat:
            ctx.planned.append(PlannedMail(
                to=other.email, seat=other.seat, game_id=row.id, attach_record=False,
                subject=subject(row.id, "Invitation declined"),
                sections=[Section(lines=[f"{seat.email} declined game {row.id}; it is cancelled."])]))


def do_resign(ctx: MailContext, command: Command) -> None:
    row, state = load_game(ctx, game_id_of(ctx, command))
    seat = authenticate(ctx, row, command)
    if row.status != "active":
        raise CommandFailed(f"game {row.id} is {row.status}; only running games can be resigned.")
    if seat.seat in state.dropped_seats:
        raise CommandFailed(f"you were dropped from game {row.id} at a deadline; it goes on without you.")
    winners = [s.seat for s in row.seats if s.seat != seat.seat and s.seat not in state.dropped_seats]
    row.status = "over"
    row.to_move = None
    row.updated_at = row.finished_at = ctx.now
    row.record["result"] = {"reason": "resigned", "resigned": seat.seat, "winners": winners,
                            "at": iso(ctx.now)}
    ctx.tx.save_game(row)
    lines = result_lines(row, state)
    ctx.reply(Section(title=f"You resigned {row.id}", lines=lines, pre=state.score().text), row.id)
    for other in row.seats:
        if other.seat != seat.seat:
            ctx.planned.append(PlannedMail(
                to=other.email, seat=other.seat, game_id=row.id,
                subject=subject(row.id, "Game over"),
                sections=[Section(title="Game over", lines=lines, pre=state.score().text)]))


def do_board(ctx: MailContext, command: Command) -> None:
    row, state = load_game(ctx, game_id_of(ctx, command))
    mine = sender_seat(row)(ctx.mail.from_addr)
    viewer = mine.seat if mine else None
    if row.status == "invited":
        ctx.reply(Section(title=f"Board of {row.id}", lines=[
            f"Game {row.id} has not started: waiting for "
            + ", ".join(s.email for s in row.seats if not s.accepted) + " to accept."]), row.id)
        return
    ctx.reply(board_section(state, viewer, f"Board of {row.id} (ply {state.ply})",
                            [players_line(row)], with_legal=row.status == "active"), row.id)


def do_move(ctx: MailContext, command: Command) -> None:
    game_id = game_id_of(ctx, command)
    row, state = load_game(ctx, game_id)
    seat = authenticate(ctx, row, command)
    if row.status != "active":
        raise CommandFailed(f"game {row.id} is {row.status}; no moves can be made.")
    expected = command.ply if command.ply is not None else ctx.expected_ply.pop(game_id, None)
    if expected is not None and expected != state.ply:
        raise CommandFailed(
            f"your mail answers the board of ply {expected}, but game {row.id} is at ply {state.ply}: "
            "the move was not applied. Here is the current board; reply to this mail to move.",
            board_section(state, seat.seat, f"Board of {row.id} (ply {state.ply})"))
    if seat.seat in state.dropped_seats:
        raise CommandFailed(f"you were dropped from game {row.id} at a deadline; it goes on without you.")
    if state.to_move != seat.seat:
        raise CommandFailed(f"it is {state.to_move}'s turn, not yours ({seat.seat}).",
                            board_section(state, seat.seat, f"Board of {row.id} (ply {state.ply})"))
    game = get_game(row.game)
    try:
        canonical, notes = append_move(game, state, row.record, command.move or "", ctx.now, seat.seat)
    except MoveError as exc:
        raise CommandFailed(f"{command.move!r} was not applied: {exc}",
                            board_section(state, seat.seat, f"Board of {row.id} (ply {state.ply})")
                            ) from None
    ctx.expected_ply[game_id] = state.ply  # a second move in the same mail continues from here
    save_game(ctx, row, state)
    headline = f"{seat.seat} played {canonical} (ply {state.ply})."
    lines = [headline, *notes]
    if state.is_over:
        lines += result_lines(row, state)
    elif state.to_move == seat.seat:
        lines.append("It is your move again.")
    else:
        lines.append(f"Now {state.to_move} is to move.")
    if state.is_over:
        title = "Game over"
    elif state.to_move == seat.seat:
        title = f"Your move (ply {state.ply})"
    else:
        title = f"Move applied (ply {state.ply})"
    ctx.reply(board_section(state, seat.seat, title, lines), row.id)
    ctx.outcomes.append(f"applied {canonical}")
    notify_players(ctx, row, state, seat.seat, " ".join([headline, *notes]))


HANDLERS: dict[str, Handler] = {
    "help": do_help, "games": do_games, "new": do_new, "accept": do_accept, "decline": do_decline,
    "resign": do_resign, "board": do_board, "move": do_move,
}


def register_handler(verb: str, handler: Handler) -> None:
    """Feature modules add their commands here (and their words with commands.register_verb)."""
    HANDLERS[verb] = handler
