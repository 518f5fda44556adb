"""Finding a tournament a command names, holding it while the command changes it, saving it."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pbem.commands.parsing import Command
from pbem.community.moderation import is_moderator
from pbem.i18n import _
from pbem.processing.context import MailContext
from pbem.processing.games import CommandFailed, address_proven, mail_tokens
from pbem.store.tournaments import TournamentRow
from pbem.tournaments import running
from pbem.tournaments.document import is_tournament


def tournament_of(ctx: MailContext, command: Command, *, lock: bool = True) -> TournamentRow:
    ident = command.game or (ctx.context_tag if is_tournament(ctx.context_tag) else None)
    if not ident:
        raise CommandFailed(_("which tournament? Write '{verb} T' with its id, like t-3 ('tournaments' lists "
                              "them).").format(verb=command.verb))
    found = ctx.tx.tournaments.get(ident, for_update=lock)
    if found is None:
        raise CommandFailed(_("there is no tournament {id}; 'tournaments' lists the open ones.").format(
            id=ident))
    if lock:
        running.hold(found.id)
    return found


def held_handler(handler):  # type: ignore[no-untyped-def]
    """The handler runs holding the tournaments it changes (see ``running.holding``)."""
    def run(ctx: MailContext, command: Command) -> None:
        with running.holding():
            handler(ctx, command)
    run.__doc__ = handler.__doc__
    return run


def save(ctx: MailContext, trow: TournamentRow) -> None:
    trow.updated_at = ctx.now
    trow.entrants = entrant_rows(trow.doc, ctx.now)
    ctx.tx.tournaments.save(trow)


def entrant_rows(doc: dict[str, Any], now: datetime) -> list[tuple[str, str, datetime]]:
    """The entrants as the store indexes them (who is in which tournament), from the document."""
    return [(e["email"], e.get("status", "entered"), _when(e.get("entered_at")) or now)
            for e in doc.get("entrants", [])]


def _when(text: Any) -> datetime | None:
    return datetime.fromisoformat(text.replace("Z", "+00:00")) if isinstance(text, str) else None


def may_organize(ctx: MailContext, command: Command) -> bool:
    """A moderator (with the token), or any player with a proven address where the server lets
    players organize (``[tournaments] organizers = "players"``)."""
    if is_moderator(ctx.config, ctx.secret, ctx.mail.from_addr, mail_tokens(ctx, command)):
        return True
    return ctx.config.tournaments.organizers == "players" and address_proven(ctx, command)
