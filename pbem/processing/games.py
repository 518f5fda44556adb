"""What every command that touches a game shares: finding the game, checking who wrote, saving a
changed position and telling the players. Core handlers and feature modules (observers, deadlines,
moderators) use these, so a game is saved and announced the same way whoever changed it."""

from __future__ import annotations

from collections.abc import Callable

from pbem.commands.parsing import Command
from pbem.outbox.compose import Section
from pbem.processing import hooks
from pbem.processing.context import MailContext, PlannedMail
from pbem.processing.gamemail import board_section, result_lines, subject
from pbem.record import iso
from pbem.store.base import GameRow, Seat
from pbem.tokens import token_hash


class CommandFailed(Exception):
    """A command that cannot be carried out; the message goes into the reply."""

    def __init__(self, message: str, *extra: Section):
        super().__init__(message)
        self.message = message
        self.extra = list(extra)


class AuthFailed(Exception):
    """From address and token do not match a seat; the sender gets no reply."""

    def __init__(self, game_id: str, seat: str | None):
        super().__init__(game_id)
        self.game_id = game_id
        self.seat = seat


def game_id_of(ctx: MailContext, command: Command) -> str:
    game_id = command.game or ctx.context_game
    if not game_id:
        raise CommandFailed(f"which game? Write '{command.verb} GAME' (see 'games' for yours).")
    return game_id


def load_game(ctx: MailContext, game_id: str):
    loaded = ctx.load(game_id)
    if loaded is None:
        raise CommandFailed(f"there is no game {game_id}. Send 'games' for the list of yours.")
    return loaded


def sender_seat(row: GameRow) -> Callable[[str], Seat | None]:
    def find(email: str) -> Seat | None:
        return next((s for s in row.seats if s.email == email), None)
    return find


def authenticate(ctx: MailContext, row: GameRow, command: Command) -> Seat:
    """From must be the seat's registered address AND the token (Reply-To plus-address, a 'token'
    line or the turn file) must be that seat's."""
    candidates = [*ctx.mail.plus_tokens, ctx.mail.body_token, command.token]
    hashes = {token_hash(t) for t in candidates if t}
    named: Seat | None = None
    for seat in row.seats:
        if seat.token_hash in hashes:
            named = seat
            if seat.email == ctx.mail.from_addr:
                return seat
    if named is None:
        named = sender_seat(row)(ctx.mail.from_addr)
    raise AuthFailed(row.id, named.seat if named else None)


def save_game(ctx: MailContext, row: GameRow, state) -> None:
    row.to_move = None if state.is_over else state.to_move
    row.updated_at = ctx.now
    if state.is_over and row.status == "active":
        row.status = "over"
        row.finished_at = ctx.now
        score = state.score()
        result = {"reason": "scored", "totals": score.totals, "winners": score.winners, "at": iso(ctx.now)}
        if state.dropped_seats:
            # players dropped at a deadline come after everyone who played to the end, the last one
            # dropped first; the engine's winners already leave them out
            playing = [s for s in score.totals if s not in state.dropped_seats]
            result["ranking"] = [*sorted(playing, key=lambda s: -score.totals[s]),
                                 *reversed(state.dropped_seats)]
        row.record.setdefault("result", result)
    for hook in hooks.GAME_SAVED:
        hook(ctx, row, state)
    ctx.tx.save_game(row)
    ctx.touched[row.id] = (row, state)


def notify_players(ctx: MailContext, row: GameRow, state, exclude: str | None, headline: str) -> None:
    """Everyone but ``exclude`` gets the board: "your move" for the seat to move, the result at the end.
    Players dropped from the game get only the result: they no longer play, and ``board`` shows the
    game to them when they want."""
    for seat in row.seats:
        if seat.seat == exclude or (seat.seat in state.dropped_seats and not state.is_over):
            continue
        if state.is_over:
            title, text = "Game over", "Game over"
            lines = [headline, *result_lines(row, state)]
        elif state.to_move == seat.seat:
            title, text = "Your move", f"Your move (ply {state.ply})"
            lines = [headline, f"You play {seat.seat}. It is your move."]
        else:
            title, text = "Board", f"Board after ply {state.ply}"
            lines = [headline, f"You play {seat.seat}. Waiting for {state.to_move}."]
        ctx.planned.append(PlannedMail(
            to=seat.email, subject=subject(row.id, text), game_id=row.id, seat=seat.seat,
            sections=[board_section(state, seat.seat, title, lines)]))
    for hook in hooks.BOARD_SENT:
        hook(ctx, row, state, headline)
