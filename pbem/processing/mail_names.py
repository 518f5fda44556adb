"""The name a player goes by in mails: their nickname (``set nickname``), else the name their mail
client writes in the From header ("Bob" of ``Bob <bob@example.org>``), else their address.

The client's name is learnt from mail that proves its sender, one carrying the sender's own seat
token (a reply to one of our mails, an accepted invitation): a forged From could otherwise rename
anyone. It is kept with the address (``players.settings``), so every game names the player the
same way from then on, the ones they join later too. Until then a game knows a player by the name
of the mail that brought them into it (``seats.name``: the challenge, the join).
"""

from __future__ import annotations

from pbem.processing import hooks
from pbem.processing.context import MailContext
from pbem.store.base import Tx

#: The key in ``players.settings`` under which the mail client's name is kept.
MAIL_NAME = "mail_name"
NAME_MAX = 40


def player_name(tx: Tx, email: str, seat_name: str = "") -> str:
    """How ``email`` is called in mails; ``seat_name`` is the name a game knows them by."""
    settings = tx.get_player(email) if email else {}
    return settings.get("nickname") or settings.get(MAIL_NAME) or seat_name or email


def client_name(from_name: str) -> str:
    """A From header's display name fit to show, or "": one that is an address (some clients
    write the address there) names nobody better than the address itself."""
    name = " ".join("".join(ch for ch in from_name if ch.isprintable()).split())
    return name[:NAME_MAX].rstrip() if name and "@" not in name else ""


def _learn(ctx: MailContext) -> None:
    """hooks.MAIL_READ: the proven sender's client name, when it is new or changed."""
    email = ctx.mail.from_addr
    if not email or ctx.context_seat_email != email:
        return
    name = client_name(ctx.mail.from_name)
    settings = ctx.tx.get_player(email)
    if name and settings.get(MAIL_NAME) != name:
        ctx.tx.set_player(email, {**settings, MAIL_NAME: name})


hooks.MAIL_READ.append(_learn)
