"""How tournament mails name things: an entrant (nickname, the name of their mail client, else
the address), a tournament, a format."""

from __future__ import annotations

from typing import Any

from engine import get_game
from pbem.i18n import _
from pbem.processing.context import MailContext
from pbem.store.tournaments import TournamentRow
from pbem.tournaments import document as d

# --- names --------------------------------------------------------------------------------------

def name_of(ctx: MailContext, doc: dict[str, Any], email: str) -> str:
    """How mails call an entrant: nickname, the name of their mail client, else the address."""
    nickname = ctx.tx.get_player(email).get("nickname")
    found = d.entrant(doc, email)
    return nickname or (found or {}).get("name") or email


def title(trow: TournamentRow) -> str:
    return _("{id} ({game}, {format})").format(id=trow.id, game=get_game(trow.game).title,
                                              format=format_name(trow.format))


def format_name(fmt: str) -> str:
    return {"round-robin": _("round robin"), "swiss": _("Swiss"), "elimination": _("single elimination"),
            "double-elimination": _("double elimination"), "ladder": _("ladder"),
            "league": _("league")}.get(fmt, fmt)
