"""Seat tokens: 130 random-looking bits per seat, never stored in the database.

Every mail to a seat must carry its token (in the Reply-To plus-address), yet the database may only hold
a hash. So a token is derived with HMAC from a server secret kept in its own file (mode 0600) in the data
directory, from the game id, the seat and a generation number (raised when a player is replaced). A leaked
database reveals no token; a leaked secret file can be revoked by replacing it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
from pathlib import Path

TOKEN_CHARS = 26  # 26 base32 characters = 130 bits


def load_or_create_secret(data_dir: Path) -> bytes:
    path = Path(data_dir) / "secret.key"
    try:
        return bytes.fromhex(path.read_text().strip())
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    secret = secrets.token_bytes(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, secret.hex().encode() + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    return secret


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


def looks_like_token(text: str) -> bool:
    text = text.strip().lower()
    return len(text) == TOKEN_CHARS and all(c in "abcdefghijklmnopqrstuvwxyz234567" for c in text)
