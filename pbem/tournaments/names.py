"""How tournament mails name things: an entrant (nickname, the name of their mail client, else
the address), a tournament, a format."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from engine import get_game
from pbem.i18n import _
from pbem.processing.context import MailContext
from pbem.store.tournaments import TournamentRow
from pbem.tournaments import document as d

# --- names --------------------------------------------------------------------------------------

_reader = threading.local()


@contextmanager
def read_by(email: str) -> Iterator[None]:
    """Around the text of a mail to ``email``: their own name gets "(you)"."""
    outer = getattr(_reader, "email", None)
    _reader.email = email
    try:
        yield
    finally:
        _reader.email = outer


def name_of(ctx: MailContext, doc: dict[str, Any], email: str, width: int | None = None, *,
            mark_within: bool = True) -> str:
    """How mails call an entrant: nickname, the name of their mail client, else the address;
    "(you)" for the reader (the mail's recipient, else the sender answered). ``width``: at most
    that many characters, the mark kept (in a column) or added after them (``mark_within``
    False: in running text)."""
    nickname = ctx.tx.get_player(email).get("nickname")
    found = d.entrant(doc, email)
    name = nickname or (found or {}).get("name") or email
    mine = email == (getattr(_reader, "email", None) or ctx.mail.from_addr)
    if width is not None:
        room = width - (len(_("{seat} (you)").format(seat="")) if mine and mark_within else 0)
        name = name if len(name) <= room else name[:max(1, room - 1)] + "…"
    return _("{seat} (you)").format(seat=name) if mine else name


def title(trow: TournamentRow) -> str:
    return _("{id} ({game}, {format})").format(id=trow.id, game=get_game(trow.game).title,
                                              format=format_name(trow.format))


def format_name(fmt: str) -> str:
    return {"round-robin": _("round robin"), "swiss": _("Swiss"), "elimination": _("single elimination"),
            "double-elimination": _("double elimination"), "ladder": _("ladder"),
            "league": _("league")}.get(fmt, fmt)
