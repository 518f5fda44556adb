"""When our mail to a player bounces: the player cannot see their boards, so their clock must not run
out on them, and the people who wait for them should know why nothing happens.

A delivery report naming a player of a running game marks that address as bouncing (once: later
reports change nothing), tells the other players of each of their games and the moderators, and
stops that player's move clock (a pause marked as a bounce's, so a moderator's own pause is never
undone by it). While the address bounces, every new turn of theirs starts paused. The mark goes
when mail from the player carries their own seat token: they received one of our mails, so mail
reaches them again; the clocks stopped for the bounce then run on with the time they had left.

An invitation is different: an invited player whose address bounces never got it, and the players
who wait for the answer would wait for ever. It is cancelled at once (at every report, not only
the first: an address known to bounce may be invited again), and the others are told why, with
what the mail system answered. Before a game starts nobody's clock runs, so a player who accepted
and bounces leaves the invitation waiting; their turns start stopped once it has started.

The same holds for an address the relay refuses at RCPT TO: the sender reports such a refusal as a
bounce (``pbem.outbox.refusal``).

Reports about addresses that hold no seat in a running game are only logged (the bounces table).
"""

from __future__ import annotations

from engine import State, get_game
from pbem.community import deadlines as dl
from pbem.i18n import N_, _
from pbem.outbox.compose import Section
from pbem.processing import hooks
from pbem.processing.context import EVENT, NOTICE, MailContext, PlannedMail
from pbem.processing.gamemail import game_names, who
from pbem.record import iso
from pbem.store.base import GameRow, Seat

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
    """hooks.BOUNCED: mark, tell once, stop the clocks; cancel the invitations the address cannot
    receive (every time: an address already known to bounce may be invited again)."""
    for address in addresses:
        games = [row for row in ctx.tx.games_for_email(address) if row.status in RUNNING]
        if not games:
            continue
        reason = ctx.mail.bounce_reasons.get(address, "")
        first = ctx.tx.mark_bouncing(address, ctx.now, f"delivery report: {reason}" if reason
                                     else "delivery report")
        lines = []
        for listed in games:
            row, _state = ctx.load(listed.id) or (listed, None)
            seat = next((s for s in row.seats if s.email == address), None)
            if seat is None:
                continue
            if row.status == "invited" and not seat.accepted:
                _cancel(ctx, row, seat, reason)
                lines.append((row, seat.seat, N_(", invitation cancelled")))
                continue
            if not first:
                continue
            stopped = _pause(row, seat.seat, ctx)
            if stopped:
                ctx.tx.save_game(row)
            lines.append((row, seat.seat, N_(", clock stopped") if stopped
                          else N_(", invitation waits") if row.status == "invited" else ""))
            _tell_players(ctx, row, seat.seat, address)
        if lines:
            _tell_moderators(ctx, address, lines)


def _tell_moderators(ctx: MailContext, address: str, lines: list[tuple[GameRow, str, str]]) -> None:
    clocks = any(row.status != "cancelled" for row, _seat, _what in lines)
    for moderator in ctx.config.moderators:
        with ctx.speaking_to(moderator):
            listed_games = ", ".join(
                f"{game.id} ({get_game(game.game).seat_label(seat)}{_(what) if what else ''})"
                for game, seat, what in lines)
            ctx.planned.append(PlannedMail(
                to=moderator, kind=NOTICE,
                subject="[pbem] " + _("Mail to {address} bounces").format(address=address),
                headline=(_("Mail to {address} bounces: their clocks are stopped") if clocks
                          else _("Mail to {address} bounces")).format(address=address),
                sections=[Section(lines=[
                    _("Mail to {address} bounces. Their games: {games}.").format(
                        address=address, games=listed_games),
                    *([_("Their move clocks are stopped until mail from them (with their seat token) "
                         "shows that our mail reaches them again. 'admin replace GAME SEAT ADDRESS' "
                         "gives a seat to another address.")] if clocks else [])])]))


def _cancel(ctx: MailContext, row: GameRow, seat: Seat, reason: str) -> None:
    """An invitation the invited address cannot receive is cancelled, and the players who wait
    for it hear why (the address, which the challenger typed, and the mail system's answer)."""
    row.status = "cancelled"
    row.updated_at = row.finished_at = ctx.now
    row.record["result"] = {"reason": "cancelled", "bounced": seat.seat, "at": iso(ctx.now)}
    ctx.tx.save_game(row)
    ctx.outcomes.append(f"cancelled {row.id}: mail to {seat.email} bounces")
    for other in row.seats:
        if other.email == seat.email:
            continue
        with ctx.speaking_to(other.email):
            lines = [_("Their mail system answered: {reason}").format(reason=reason)] if reason else []
            lines.append(_("Check the address; to play, challenge again: new {game} with ADDRESS").format(
                game=row.game))
            ctx.planned.append(PlannedMail(
                to=other.email, seat=other.seat, game_id=row.id, kind=EVENT,
                headline=_("Game {id} is cancelled: mail to {address} cannot be delivered").format(
                    id=row.id, address=seat.email),
                sections=[Section(lines=lines)]))


def _tell_players(ctx: MailContext, row: GameRow, seat: str, address: str) -> None:
    label = get_game(row.game).seat_label
    for other in row.seats:
        if other.email == address:
            continue
        names = game_names(ctx.tx, row)
        with ctx.speaking_to(other.email):
            if row.status == "invited":  # nobody's clock runs yet
                what = _("Game {id} has not started: the invitation waits for every player's answer. "
                         "Once it starts, the move clock of {seat} stays stopped until mail reaches "
                         "them again; the moderators were told.").format(id=row.id, seat=label(seat))
            else:
                what = _("The move clock of {seat} is stopped until mail reaches them again. Nothing "
                         "changes for you; the moderators were told.").format(seat=label(seat))
            ctx.planned.append(PlannedMail(
                to=other.email, seat=other.seat, game_id=row.id, kind=EVENT,
                headline=_("Mail to {player} bounces").format(player=who(seat, other.seat, names)),
                sections=[Section(lines=[
                    _("Their mail system reports that it cannot deliver our mail."), what])]))


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
