"""Seat tokens: 130 random-looking bits per seat, never stored in the database.

Every mail to a seat must carry its token (in the Reply-To plus-address), yet the games hold only a
hash. So a token is derived with HMAC from a server secret, from the game id, the seat and a generation
number (raised when a player is replaced). The secret is shared by every worker through the database
(``pbem.store.secret``, which also takes over the ``secret.key`` file of earlier versions).
"""

from __future__ import annotations

import base64
import hashlib
import hmac

TOKEN_CHARS = 26  # 26 base32 characters = 130 bits


def seat_token(secret: bytes, game_id: str, seat: str, generation: int = 0) -> str:
    """Lower-case base32 so that mail clients which fold address case do not break it."""
    digest = hmac.new(secret, f"{game_id}\0{seat}\0{generation}".encode(), hashlib.sha256).digest()
    return base64.b32encode(digest).decode("ascii").lower()[:TOKEN_CHARS]


def address_token(secret: bytes, email: str, generation: int = 0) -> str:
    """The token of an address rather than a seat: it goes into the Reply-To of mails that are about
    no single game (answers to ``help``, ``games``, ``set``, the daily digest), so that replying to
    any of the server's mails proves the sender reads that mailbox."""
    return seat_token(secret, "\0address", email.strip().lower(), generation)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.strip().lower().encode("ascii", "replace")).hexdigest()


def split_reply_tag(tag: str) -> tuple[str, int | None]:
    """A Reply-To tag is the seat's token, followed by ``-N`` when the mail asked for move N:
    ``pbem+TOKEN-12@host``. The number makes a reply (or a tapped link) to an old mail refused
    instead of played in a later position, even from clients that drop In-Reply-To."""
    token, dash, number = tag.rpartition("-")
    if dash and number.isdigit() and token:
        return token, int(number)
    return tag, None


def looks_like_token(text: str) -> bool:
    text = text.strip().lower()
    return len(text) == TOKEN_CHARS and all(c in "abcdefghijklmnopqrstuvwxyz234567" for c in text)
