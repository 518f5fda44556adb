"""Moving to a new address (``set address NEW``, confirmed with ``confirm address CODE`` from the new
address) and new tokens (``rekey GAME``); ``pbem admin address|rekey`` and ``admin address|rekey``
do the same for a player who lost the old mailbox.

A move is a two-step affair because whoever controls the new address must agree: ``set address``
from the registered address (proven, like every ``set``) mails a one-time code to the new address,
and only the code sent back from there, within 48 hours and once, moves anything. The store keeps
only the code's hash (``address_changes``). Then every seat of the old address, in every game (the
finished ones too, so that ratings and standings follow), its settings, the games it observes and
its held digest lines move to the new address; each game records it (``actions``: "address").

Every game still running is re-keyed at the same time: the seat's token generation goes up, so the
Reply-To addresses of mails sent to the old address stop working. A mail carrying such an old token
is refused with a notice saying so (``games.authenticate``), not silently ignored. ``rekey GAME``
does this for one game, for a token that leaked.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from datetime import timedelta

from engine import get_game
from pbem.commands.parsing import Command, CommandError, game_verb_parser, register_verb
from pbem.community.agreements import answer
from pbem.community.moderation import ADDRESS, ModerationError, record_action
from pbem.i18n import N_, _, language_of, ngettext, speaking, status_word
from pbem.outbox.compose import Action, ActionGroup, Section
from pbem.processing import hooks
from pbem.processing.context import EVENT, NOTICE, MailContext, PlannedMail
from pbem.processing.gamemail import board_section, game_names, scores_line, who
from pbem.processing.games import CommandFailed, authenticate, game_id_of, load_game, rekey_seat
from pbem.processing.handlers import register_handler
from pbem.processing.settings import Setting, register_setting
from pbem.store.base import GameRow, Seat
from pbem.tokens import token_hash

CODE_HOURS = 48
CODE_CHARS = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 8
USAGE_CONFIRM = N_("confirm address CODE   (from your new address: the code mailed there)")
USAGE_REKEY = N_("rekey GAME   (a new secret token for your seat, e.g. after a mail leaked)")
RUNNING = ("invited", "active", "open")


def _code() -> str:
    return "".join(secrets.choice(CODE_CHARS) for _i in range(CODE_LENGTH))


def _code_hash(code: str) -> str:
    return token_hash("address:" + "".join(code.split()).replace("-", "").upper())


# --- set address -------------------------------------------------------------------------------------

def check_new_address(ctx: MailContext, old: str, value: str) -> str:
    """The new address, or CommandFailed saying why it cannot be used."""
    new = value.strip().strip("<>").lower()
    if not ADDRESS.match(new):
        raise CommandFailed(_("{value} is not a mail address: set address NEW@EXAMPLE.ORG").format(
            value=repr(value)))
    if new == old:
        raise CommandFailed(_("{address} is already your address.").format(address=new))
    if new == ctx.config.address:
        raise CommandFailed(_("{address} is the server, not a player.").format(address=new))
    if ctx.tx.is_blocked(new):
        raise CommandFailed(_("{address} cannot be used here.").format(address=new))
    if ctx.tx.games_for_email(new) or ctx.tx.get_player(new):
        raise CommandFailed(_("{address} is already registered to another player (it has games or "
                              "settings here); choose another address.").format(address=new))
    return new


def _check(ctx: MailContext, value: str) -> str:
    return check_new_address(ctx, ctx.mail.from_addr, value)


def start_move(ctx: MailContext, new: str) -> None:
    """The proven ``set address NEW``: a code to the new address, and nothing else yet."""
    old = ctx.mail.from_addr
    code = _code()
    ctx.tx.add_address_change(old, new, _code_hash(code), ctx.now, ctx.now + timedelta(hours=CODE_HOURS))
    line = f"confirm address {code}"
    # the new address has no settings yet: its owner reads the language they wrote this in
    ctx.planned.append(PlannedMail(
        to=new, kind=NOTICE, subject="[pbem] " + _("Confirm your new address"),
        headline=_("Confirm: {old} asks to move to this address").format(old=old),
        sections=[Section(lines=[
            _("{old} asked to move all their games, settings and ratings to {new}. If that was you, "
              "reply to this mail from {new} with the line below (or tap it). The code works once, "
              "for {hours} hours.").format(old=old, new=new, hours=CODE_HOURS), f"  {line}",
            _("If it was not you, ignore this mail: nothing changes.")],
            actions=[ActionGroup("", [Action(_("Confirm"), line)])])]))
    ctx.outcomes.append(f"address change asked: {old} -> {new}")
    ctx.reply(Section(lines=[
        _("Nothing has moved yet: a mail with a one-time code went to {new}. Send the line it holds "
          "back from {new} within {hours} hours; then your games, settings and ratings move "
          "there, and every running game gets new tokens.").format(new=new, hours=CODE_HOURS)]),
        headline=_("Confirmation sent to {new}").format(new=new))


def parse_confirm(line: str, rest: list[str], in_game_reply: bool) -> Command | CommandError:
    if len(rest) != 1:
        return CommandError(line, _("give the code from the mail: {usage}").format(usage=_(USAGE_CONFIRM)))
    return Command("confirm address", line, args={"code": rest[0]})


def do_confirm(ctx: MailContext, command: Command) -> None:
    code_hash = _code_hash(command.args["code"])
    change = ctx.tx.address_change(code_hash)
    sender = ctx.mail.from_addr
    if change is None:
        raise CommandFailed(_("that code is wrong: copy the line from the confirmation mail "
                              "({length} letters and digits), or tap its link.").format(length=CODE_LENGTH))
    if change.used_at is not None:
        raise CommandFailed(_("that code was already used, on {when} UTC: the move it confirmed is "
                              "done, and a code works only once.").format(
            when=f"{change.used_at:%Y-%m-%d %H:%M}"))
    if change.expires_at <= ctx.now:
        raise CommandFailed(_("that code expired on {when} UTC (codes work for {hours} hours). Send "
                              "'set address {new}' from your registered address again for a new "
                              "one.").format(when=f"{change.expires_at:%Y-%m-%d %H:%M}", hours=CODE_HOURS,
                                             new=change.new_email))
    if sender != change.new_email:
        raise CommandFailed(_("this code must come back from the new address it was sent to."))
    check_new_address(ctx, change.old_email, change.new_email)
    ctx.tx.use_address_change(code_hash, ctx.now)
    reader = language_of(ctx.tx.get_player(change.old_email), ctx.config.language)  # before they move
    moved = move_address(ctx, change.old_email, change.new_email, by=change.old_email)
    with speaking(reader):
        ctx.planned.append(PlannedMail(
            to=change.old_email, kind=NOTICE, subject="[pbem] " + _("Your address has moved"),
            headline=_("Your games, settings and ratings have moved to the address you confirmed"),
            sections=[Section(lines=[_("Mail from this address no longer moves in your games, and the "
                                       "Reply-To addresses of earlier mails no longer work.")])]))
    with speaking(reader):  # the new address writes in the old one's language only once it has its settings
        ctx.reply(Section(lines=_moved_lines(moved)),
                  headline=ngettext("Your address is now {new}: {n} game moved here",
                                    "Your address is now {new}: {n} games moved here", len(moved)).format(
                      new=change.new_email, n=len(moved)))


def _moved_lines(moved: list[GameRow]) -> list[str]:
    running = [r.id for r in moved if r.status in RUNNING]
    lines = [_("Games: {games}. Your settings and ratings came along.").format(
        games=", ".join(r.id for r in moved) or _("none"))]
    if running:
        lines.append(_("Running games ({games}) have new tokens: each sends you its board "
                       "here; reply to those mails from now on.").format(games=", ".join(running)))
    return lines


def move_address(ctx: MailContext, old: str, new: str, *, by: str, why: str = "",
                 moderator: bool = False) -> list[GameRow]:
    """Every seat of ``old`` goes to ``new`` (re-keyed where the game runs), and the rest of what
    belongs to the address; each running game sends its board to the new address."""
    moved = []
    for found in ctx.tx.games_for_email(old):
        loaded = ctx.load(found.id)
        if loaded is None:
            continue
        row, state = loaded
        for seat in [s for s in row.seats if s.email == old]:
            seat.email = new
            info = row.record.setdefault("players", {}).setdefault(seat.seat, {})
            info["email"] = new
            details = {"seat": seat.seat, "old": old, "new": new}
            if moderator:
                details["moderator"] = True
            if row.status in RUNNING:
                details["token_generation"] = rekey_seat(ctx, row, seat)
            record_action(row, "address", by, why, ctx.now, state.ply, **details)
            if row.status in ("invited", "active"):
                _board_to(ctx, row, state, seat, lambda: _("your games now come to this address"), old)
        ctx.tx.save_game(row)
        moved.append(row)
    ctx.tx.move_player(old, new)
    for hook in hooks.ADDRESS_MOVED:
        hook(ctx, old, new)
    if ctx.mail.message_id and ctx.mail.from_addr == new:
        for row in moved:  # their first mail at the new address answers the confirmation
            ctx.tx.set_mail_thread(row.id, new, ctx.mail.message_id, ctx.mail.message_id)
    ctx.outcomes.append(f"moved {old} -> {new}: {len(moved)} game(s)")
    return moved


def _board_to(ctx: MailContext, row: GameRow, state, seat: Seat, event: Callable[[], str],
              reader: str) -> None:
    """The game as it stands, to the seat's (new) address, with the seat's (new) token, in the
    language of ``reader`` (the address whose settings are the player's: the old one while moving)."""
    names = game_names(ctx.tx, row)
    with ctx.speaking_to(reader):
        why = event()
        lines = [_("Game {id}: {why}. Reply to this mail from now on: earlier mails of the game carry "
                   "an old token, which is refused.").format(id=row.id, why=why),
                 scores_line(state, seat.seat, names)]
        if row.status == "active" and state.to_move == seat.seat:
            headline = _("Your move (move {number}). {why}").format(number=state.ply + 1, why=why)
        elif row.status == "active":
            headline = _("Game {id}: {why}; {player} is to move").format(
                id=row.id, why=why, player=who(state.to_move, seat.seat, names))
        else:
            headline = _("Game {id}: {why}").format(id=row.id, why=why)
        ctx.planned.append(PlannedMail(to=seat.email, seat=seat.seat, game_id=row.id, kind=EVENT,
                                       headline=headline, sections=[board_section(state, seat.seat, lines)]
                                       if row.status == "active" else [Section(lines=lines)]))


# --- rekey -------------------------------------------------------------------------------------------

def do_rekey(ctx: MailContext, command: Command) -> None:
    row, state = load_game(ctx, game_id_of(ctx, command))
    seat = authenticate(ctx, row, command)
    if row.status not in RUNNING:
        raise CommandFailed(_("game {id} is {status}; its tokens no longer let anyone move.").format(
            id=row.id, status=status_word(row.status)))
    rekey_seat(ctx, row, seat)
    record_action(row, "rekey", seat.email, "", ctx.now, state.ply, seat=seat.seat)
    row.updated_at = ctx.now
    ctx.tx.save_game(row)
    ctx.outcomes.append(f"rekey {row.id} {seat.seat}")
    answer(ctx, row, state, seat, _("New token for {id}: reply to this mail from now on").format(id=row.id), [
        _("The Reply-To of this mail carries your new token for {seat} in game {id}. Earlier "
          "mails of the game carry the old one, which is now refused.").format(
            seat=get_game(row.game).seat_label(seat.seat), id=row.id)])


def rekey_by_moderator(ctx: MailContext, game_id: str, seat_name: str, *, by: str, why: str = "") -> None:
    """``admin rekey GAME SEAT``: the seat's player gets the game with a new token."""
    row, state = _load(ctx, game_id)
    seat = next((s for s in row.seats if s.seat == seat_name.lower()), None)
    if seat is None:
        raise ModerationError(f"game {row.id} has no seat {seat_name!r}; seats: "
                              + ", ".join(s.seat for s in row.seats))
    if row.status not in RUNNING:
        raise ModerationError(f"game {row.id} is {row.status}; its tokens no longer matter")
    generation = rekey_seat(ctx, row, seat)
    record_action(row, "rekey", by, why, ctx.now, state.ply, seat=seat.seat, moderator=True)
    ctx.tx.save_game(row)
    _board_to(ctx, row, state, seat, lambda: _("a moderator gave your seat a new token")
              + (f" ({why})" if why else ""), seat.email)
    ctx.reply(Section(lines=[f"{seat.seat} ({seat.email}) has token generation {generation} and was "
                             "sent the game with it."]), row.id, headline=f"Re-keyed {seat.seat} in {row.id}")


def move_by_moderator(ctx: MailContext, old: str, new: str, *, by: str, why: str = "") -> None:
    """``admin address OLD NEW``: for a player who lost the old mailbox; no code is asked."""
    old = old.strip().strip("<>").lower()
    if not ctx.tx.games_for_email(old) and not ctx.tx.get_player(old):
        raise ModerationError(f"{old} has no games or settings here")
    try:
        new = check_new_address(ctx, old, new)
    except CommandFailed as exc:
        raise ModerationError(exc.message.rstrip(".")) from None
    moved = move_address(ctx, old, new, by=by, why=why, moderator=True)
    with ctx.speaking_to(new):  # the settings have moved there
        ctx.planned.append(PlannedMail(
            to=new, kind=NOTICE, subject="[pbem] " + _("Your address has moved"),
            headline=_("A moderator moved your games from {old} to this address").format(old=old),
            sections=[Section(lines=_moved_lines(moved) + (
                [_("Reason: {why}").format(why=why)] if why else []))]))
    ctx.reply(Section(lines=[f"{len(moved)} game(s) moved: "
                             + (", ".join(r.id for r in moved) or "none") + "."]),
              headline=f"Moved {old} to {new}")


def _load(ctx: MailContext, game_id: str):
    loaded = ctx.load(game_id.lower())
    if loaded is None:
        raise ModerationError(f"there is no game {game_id}")
    return loaded


register_setting(Setting(
    "address", "set address NEW@EXAMPLE.ORG", N_("move all your games, settings and ratings to another "
                                                 "address; a code goes there first, and only its answer from "
                                                 "there moves anything"), _check,
    default=N_("the address you write from"), act=start_move))
register_verb("confirm address", USAGE_CONFIRM, parse_confirm)
register_verb("rekey", USAGE_REKEY, game_verb_parser("rekey"))
register_handler("confirm address", do_confirm)
register_handler("rekey", do_rekey)

__all__ = ["check_new_address", "do_confirm", "do_rekey", "move_address", "move_by_moderator",
           "parse_confirm", "rekey_by_moderator", "start_move"]
