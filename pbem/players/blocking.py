"""A player's own block list: ``block ADDRESS``, ``unblock ADDRESS``, ``blocked``.

For a player who blocks an address (``hooks.SHUT_OUT``): an invitation from it (a challenge, a
rematch) is declined at once in the player's name, and the player never sees it; what it writes
to the player (``message``, a note after its move, its sealed notes at the end) is not relayed; it
cannot join the player's open challenges, and does not see them listed. Games the two play
together go on: their moves and the game's own mails are not touched. Blocking also declines the
invitations from that address the player has not answered yet.

Nothing tells the blocked address: like AbstractPlay and Dragon Go Server, which do not reveal a
block, the challenger gets the words of any decline ("... declined; game ac-7 is cancelled"),
and a message's sender the usual confirmation. (The decline comes at once, as a quick decline
would.) This is the player's own list; the moderators' ``admin block`` makes the whole server
ignore an address, which is another thing. A change of the list needs a token given to the
address (any reply to one of the server's mails carries one), as ``set`` does: a forged ``unblock``
must not let anybody back in.
"""

from __future__ import annotations

import re

from pbem.commands.helptext import HELP_TOPICS
from pbem.commands.parsing import Command, CommandError, register_verb
from pbem.i18n import N_, _, ngettext
from pbem.outbox.compose import Action, ActionGroup, Section
from pbem.processing import hooks
from pbem.processing.context import MailContext
from pbem.processing.games import CommandFailed, address_proven
from pbem.processing.handlers import register_handler
from pbem.processing.invitations import decline_for
from pbem.reading.addresses import normalize

USAGE_BLOCK = N_("block ADDRESS   (never hear from that address: help blocking)")
USAGE_UNBLOCK = "unblock ADDRESS"
USAGE_BLOCKED = N_("blocked   (the addresses you block)")
MAX_BLOCKS = 500
_ADDRESS = re.compile(r"^[^@\s<>,;:\"()\[\]]{1,64}@[^@\s<>,;:\"()\[\]]{1,255}$")
HELP = N_("""Blocking: addresses you do not want to hear from.

  block ADDRESS     its invitations to you are declined at once (you never
                    see them), its messages and notes do not reach you, and
                    it cannot join your open challenges
  unblock ADDRESS   takes it off your list
  blocked           your list

Nobody is told: the blocked address gets the answer of any declined
invitation, or the usual confirmation of a message. Games you already play
together go on as before. Your list holds up to {most} addresses.""")


def parse_address_command(verb: str):
    def parse(line: str, rest: list[str], in_game_reply: bool) -> Command | CommandError:
        words = line.split()[1:]
        if len(words) != 1:
            return CommandError(line, _("{verb} takes one mail address: {verb} NAME@EXAMPLE.ORG").format(
                verb=verb))
        return Command(verb, line, args={"address": words[0]})
    return parse


def parse_blocked(line: str, rest: list[str], in_game_reply: bool) -> Command | CommandError:
    if rest:
        return CommandError(line, _("blocked takes nothing after it; to block an address: block "
                                    "NAME@EXAMPLE.ORG"))
    return Command("blocked", line)


def _address(ctx: MailContext, command: Command) -> str:
    value = str(command.args["address"])
    address = normalize(value.strip("<>,;"))
    if not _ADDRESS.match(address):
        raise CommandFailed(_("{value} is not a mail address: {verb} NAME@EXAMPLE.ORG").format(
            value=repr(value), verb=command.verb))
    if address == ctx.mail.from_addr:
        raise CommandFailed(_("{address} is your own address.").format(address=address))
    if address == ctx.config.address:
        raise CommandFailed(_("{address} is the server, not a player.").format(address=address))
    return address


def _proven(ctx: MailContext, command: Command, line: str) -> bool:
    """The list changes only for a mail with a token of its address; else the exact line to send."""
    if address_proven(ctx, command):
        return True
    ctx.reply(Section(lines=[
        _("Your block list is yours alone, so I ask first: reply to this mail with the line below (or "
          "tap it). Nothing has changed yet."), f"  {line}"],
        actions=[ActionGroup("", [Action(_("Confirm"), line)])]),
        headline=_("Confirm: {line}").format(line=line))
    return False


def do_block(ctx: MailContext, command: Command) -> None:
    me = ctx.mail.from_addr
    address = _address(ctx, command)
    listed = ctx.tx.player_blocks(me)
    if any(blocked == address for blocked, _since in listed):
        raise CommandFailed(_("{address} is already on your block list (send 'blocked' for the list)."
                              ).format(address=address))
    if len(listed) >= MAX_BLOCKS:
        raise CommandFailed(_("your block list holds {most} addresses, the most it can; take one off "
                              "with: unblock ADDRESS").format(most=MAX_BLOCKS))
    if not _proven(ctx, command, f"block {address}"):
        return
    ctx.tx.add_player_block(me, address, ctx.now)
    ctx.outcomes.append(f"{me} blocks {address}")
    declined = []
    for row in ctx.tx.games_for_email(me):  # their invitations waiting for an answer go too
        if row.status != "invited":
            continue
        mine = next(s for s in row.seats if s.email == me)
        theirs = next((s for s in row.seats if s.email == address), None)
        if theirs is not None and theirs.accepted and not mine.accepted:
            loaded = ctx.load(row.id)
            if loaded is not None:
                decline_for(ctx, loaded[0], next(s for s in loaded[0].seats if s.email == me))
                declined.append(row.id)
    lines = [_("Invitations from {address} are declined at once (you will not see them), its "
               "messages and notes do not reach you, and it cannot join your open challenges. "
               "Games you play together go on. Nobody tells {address}.").format(address=address)]
    if declined:
        lines.append(ngettext("Its invitation {ids} is declined.", "Its invitations {ids} are declined.",
                              len(declined)).format(ids=", ".join(declined)))
    lines.append(_("To take it off your list: unblock {address}").format(address=address))
    ctx.reply(Section(lines=lines), headline=_("Blocked: {address}").format(address=address))


def do_unblock(ctx: MailContext, command: Command) -> None:
    me = ctx.mail.from_addr
    address = _address(ctx, command)
    if not any(blocked == address for blocked, _since in ctx.tx.player_blocks(me)):
        raise CommandFailed(_("{address} is not on your block list (send 'blocked' for the list)."
                              ).format(address=address))
    if not _proven(ctx, command, f"unblock {address}"):
        return
    ctx.tx.remove_player_block(me, address)
    ctx.outcomes.append(f"{me} unblocks {address}")
    ctx.reply(Section(lines=[_("Its invitations and messages reach you again; earlier ones are not "
                               "sent again.")]),
              headline=_("Unblocked: {address}").format(address=address))


def do_blocked(ctx: MailContext, command: Command) -> None:
    listed = ctx.tx.player_blocks(ctx.mail.from_addr)
    if not listed:
        ctx.reply(Section(lines=[_("To block an address: block NAME@EXAMPLE.ORG ('help blocking' says "
                                   "what it does).")]),
                  headline=_("You block no addresses"))
        return
    width = max(len(address) for address, _since in listed)
    lines = [_("{address}  since {date}").format(address=address.ljust(width), date=f"{since:%Y-%m-%d}")
             for address, since in listed]
    ctx.reply(Section(lines=[*lines, _("To take one off: unblock ADDRESS")]),
              headline=ngettext("You block {n} address", "You block {n} addresses", len(listed)).format(
                  n=len(listed)))


HELP_TOPICS["blocking"] = lambda: _(HELP).format(most=MAX_BLOCKS)
register_verb("block", USAGE_BLOCK, parse_address_command("block"))
register_verb("unblock", USAGE_UNBLOCK, parse_address_command("unblock"))
register_verb("blocked", USAGE_BLOCKED, parse_blocked)
register_handler("block", do_block)
register_handler("unblock", do_unblock)
register_handler("blocked", do_blocked)
hooks.SHUT_OUT.append(lambda tx, other: tx.blocked_by(other))

__all__ = ["do_block", "do_blocked", "do_unblock", "parse_address_command", "parse_blocked"]
