"""Players talking through the server, and asking it for the record: ``message GAME [all] TEXT``
and ``record GAME``.

A note after a move travels with the move (see ``handlers.do_move``); ``message`` sends one at any
time, to the opponents, or with ``all`` to the observers too. Notes stay in the game's thread. A
reader who has shut the sender out (``hooks.shut_out``) does not get it, and the sender's
confirmation does not say so.
"""

from __future__ import annotations

from pbem.commands.parsing import Command
from pbem.i18n import _, ngettext, status_word
from pbem.outbox.compose import Section
from pbem.processing import hooks
from pbem.processing.context import EVENT, MailContext, PlannedMail
from pbem.processing.gamemail import game_names
from pbem.processing.games import CommandFailed, authenticate, game_id_of, load_game
from pbem.processing.handlers import register_handler

MESSAGE_MAX_LINES = 40


def do_message(ctx: MailContext, command: Command) -> None:
    row, _state = load_game(ctx, game_id_of(ctx, command))
    seat = authenticate(ctx, row, command)
    text = [line for line in command.note if line.strip()][:MESSAGE_MAX_LINES]
    if not text:
        raise CommandFailed(_("the message is empty: write message {id} TEXT (the text may go on the "
                              "following lines).").format(id=row.id))
    if row.status in ("declined", "cancelled"):
        raise CommandFailed(_("game {id} was {status}; nobody would read the message.").format(
            id=row.id, status=status_word(row.status)))
    names = game_names(ctx.tx, row)
    sender = names.get(seat.seat, seat.seat)
    lines = [f"{sender}: {line}" for line in text]
    def headline() -> str:
        return _("{player} writes: {text}").format(player=sender, text=text[0])
    recipients = [s for s in row.seats if s.seat != seat.seat]
    for other in recipients:
        if hooks.shut_out(ctx.tx, other.email, seat.email):
            continue  # they do not hear from the sender; the sender is not told (see hooks.SHUT_OUT)
        with ctx.speaking_to(other.email):
            ctx.planned.append(PlannedMail(to=other.email, seat=other.seat, game_id=row.id, kind=EVENT,
                                           headline=headline(), sections=[Section(lines=lines)]))
    observers = []
    if command.args.get("all"):
        players = {s.email for s in row.seats}
        observers = [e for e in ctx.tx.observers(row.id) if e not in players and not ctx.tx.is_blocked(e)]
        for email in observers:
            if hooks.shut_out(ctx.tx, email, seat.email):
                continue
            with ctx.speaking_to(email):
                ctx.planned.append(PlannedMail(to=email, game_id=row.id, kind=EVENT, observer=True,
                                               headline=headline(), sections=[Section(lines=lines)]))
    told = [names.get(s.seat, s.seat) for s in recipients]
    if observers:
        told.append(ngettext("{n} observer", "{n} observers", len(observers)).format(n=len(observers)))
    ctx.reply(Section(lines=lines), row.id, headline=_("Your message went to {players}").format(
        players=", ".join(told)))


def do_record(ctx: MailContext, command: Command) -> None:
    """The record as a player may see it (no hidden setup), for ``pbem replay`` or a post-mortem."""
    row, state = load_game(ctx, game_id_of(ctx, command))
    if not any(s.email == ctx.mail.from_addr for s in row.seats) and ctx.mail.from_addr not in \
            ctx.tx.observers(row.id) and row.status != "over":
        raise CommandFailed(_("you neither play nor observe game {id}; its record is public once it is "
                              "over.").format(id=row.id))
    ctx.reply(Section(lines=[_("{id}.json is attached: the setup and every move so far ({n}). Replay it "
                               "with `pbem replay {id}.json`.").format(id=row.id, n=state.ply)]),
              row.id, headline=_("The record of {id} is attached").format(id=row.id))
    ctx.attach_record = True


register_handler("message", do_message)
register_handler("record", do_record)
