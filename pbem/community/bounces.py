"""When our mail to a player bounces: the player cannot see their boards, so their clock must not run
out on them, and the people who wait for them should know why nothing happens.

A delivery report naming a player of a running game marks that address as bouncing (once: later
reports change nothing), tells the other players of each of their games and the moderators, and
stops that player's move clock (a pause marked as a bounce's, so a moderator's own pause is never
undone by it). While the address bounces, every new turn of theirs starts paused. The mark goes
when mail from the player carries their own seat token: they received one of our mails, so mail
reaches them again; the clocks stopped for the bounce then run on with the time they had left.

Reports about addresses that hold no seat in a running game are only logged (the bounces table).
"""

from __future__ import annotations

from engine import State, get_game
from pbem.community import deadlines as dl
from pbem.i18n import _
from pbem.outbox.compose import Section
from pbem.processing import hooks
from pbem.processing.context import EVENT, NOTICE, MailContext, PlannedMail
from pbem.processing.gamemail import game_names, who
from pbem.store.base import GameRow

RUNNING = ("invited", "active")
_MARK = "bounce"  # record["clock"][_MARK] = the seat whose bounce paused the clock


def _seat_of(row: GameRow, email: str) -> str | None:
    return next((s.seat for s in row.seats if s.email == email), None)


def _pause(row: GameRow, seat: str, ctx: MailContext) -> bool:
    """Stop the clock when it runs for ``seat``; True when it was stopped here."""
    if row.status != "active" or row.to_move != seat or row.deadline_at is None or dl.is_paused(row):
        return False
    dl.pause(row, ctx.now, why="bounce")
    dl.clock(row)[_MARK] = seat
    return True


def _resume(row: GameRow, seat: str, ctx: MailContext) -> bool:
    state = row.record.get("clock") or {}
    if row.status != "active" or state.get(_MARK) != seat or not dl.is_paused(row):
        return False
    state.pop(_MARK, None)
    dl.resume(row, ctx.now, dl.seat_vacations(ctx.tx, row, seat))
    return True


def on_bounced(ctx: MailContext, addresses: list[str]) -> None:
    """hooks.BOUNCED: mark, tell once, stop the clocks."""
    for address in addresses:
        games = [row for row in ctx.tx.games_for_email(address) if row.status in RUNNING]
        if not games or not ctx.tx.mark_bouncing(address, ctx.now, "delivery report"):
            continue
        lines = []
        for listed in games:
            row, _state = ctx.load(listed.id) or (listed, None)
            seat = _seat_of(row, address)
            if seat is None:
                continue
            stopped = _pause(row, seat, ctx)
            if stopped:
                ctx.tx.save_game(row)
            lines.append((row, seat, stopped))
            _tell_players(ctx, row, seat, address)
        for moderator in ctx.config.moderators:
            with ctx.speaking_to(moderator):
                listed_games = ", ".join(
                    f"{game.id} ({get_game(game.game).seat_label(seat)}"
                    + (_(", clock stopped") if stopped else "") + ")" for game, seat, stopped in lines)
                ctx.planned.append(PlannedMail(
                    to=moderator, kind=NOTICE,
                    subject="[pbem] " + _("Mail to {address} bounces").format(address=address),
                    headline=_("Mail to {address} bounces: their clocks are stopped").format(address=address),
                    sections=[Section(lines=[
                        _("Mail to {address} bounces. Their games: {games}.").format(
                            address=address, games=listed_games),
                        _("Their move clocks are stopped until mail from them (with their seat token) "
                          "shows that our mail reaches them again. 'admin replace GAME SEAT ADDRESS' "
                          "gives a seat to another address.")])]))


def _tell_players(ctx: MailContext, row: GameRow, seat: str, address: str) -> None:
    for other in row.seats:
        if other.email == address:
            continue
        names = game_names(ctx.tx, row)
        with ctx.speaking_to(other.email):
            ctx.planned.append(PlannedMail(
                to=other.email, seat=other.seat, game_id=row.id, kind=EVENT,
                headline=_("Mail to {player} bounces").format(player=who(seat, other.seat, names)),
                sections=[Section(lines=[
                    _("Their mail system reports that it cannot deliver our mail."),
                    _("The move clock of {seat} is stopped until mail reaches them again. Nothing "
                      "changes for you; the moderators were told.").format(
                        seat=get_game(row.game).seat_label(seat))])]))


def on_game_saved(ctx: MailContext, row: GameRow, state: State) -> None:
    """hooks.GAME_SAVED (after the deadline hook started the new turn's clock): a player whose
    address bounces gets their turn with the clock stopped."""
    mover = row.to_move
    email = next((s.email for s in row.seats if s.seat == mover), None) if mover else None
    if email and ctx.tx.is_bouncing(email):
        _pause(row, mover, ctx)  # type: ignore[arg-type]


def on_mail_read(ctx: MailContext) -> None:
    """hooks.MAIL_READ: mail with the sender's own seat token proves our mail reaches them."""
    email = ctx.mail.from_addr
    if ctx.context_game is None or ctx.context_seat is None:
        return
    # the token's seat, as read in this transaction, is the sender's: no need to load the game
    if not email or ctx.context_seat_email != email or not ctx.tx.clear_bouncing(email):
        return
    for listed in ctx.tx.games_for_email(email):
        if listed.status != "active":
            continue
        loaded = ctx.load(listed.id)
        if loaded is None:
            continue
        game, _state = loaded
        seat = _seat_of(game, email)
        if seat is not None and _resume(game, seat, ctx):
            ctx.tx.save_game(game)


hooks.BOUNCED.append(on_bounced)
hooks.GAME_SAVED.append(on_game_saved)
hooks.MAIL_READ.append(on_mail_read)
