"""Who the public archive names, and how: a player's nickname, else a pseudonym - never an address.

The site is public and players never agreed to show their mail address, nor its local part, nor
the display name of their mail client. A player chooses a nickname by mail (``set nickname``,
kept in their settings); without one the site gives them a pseudonym, "Player K7QXM", the same in
every game, standings and tournament table, so a reader can follow one player from game to game.
The pseudonym is an HMAC of the address with the server's secret: stable while the secret is, and
no one without the secret can test a guessed address against it. Everything the site prints about
a player goes through here, so this module is the one place that decides.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Mapping
from typing import Any

from pbem.archive.search import players_of
from pbem.i18n import _
from pbem.store.base import GameRow, Store
from pbem.store.secret import server_secret

# Anything shaped like an address (``someone@somewhere``), wherever it hides in a record.
_ADDRESS = re.compile(r"[^\s<>\"'@,;:()\[\]]+@[^\s<>\"'@,;:()\[\]]+")
HIDDEN = "(address hidden)"
_CODE = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I


def pseudonym(email: str, key: bytes) -> str:
    """"Player K7QXM": five characters of an HMAC of the address (32**5, about 33 million codes)."""
    digest = hmac.new(key, email.strip().lower().encode(), hashlib.sha256).digest()
    return _("Player {code}").format(code="".join(_CODE[b % len(_CODE)] for b in digest[:5]))


def public_name(seat: str, settings: Mapping[str, Any] | None, email: str | None = None,
                key: bytes | None = None) -> str:
    """The nickname in a player's settings, else the pseudonym of their address (with the
    server's ``key``), else the seat capitalised ("Black", "Red"). A nickname that looks like an
    address is not used (the site shows none); computer seats keep their seat name."""
    nickname = " ".join(str((settings or {}).get("nickname") or "").split())
    if nickname and not _ADDRESS.search(nickname):
        return nickname
    if email and key and not email.lower().endswith(".invalid"):
        return pseudonym(email, key)
    return seat.capitalize()


def person_name(settings: Mapping[str, Any] | None, email: str, key: bytes | None) -> str:
    """A player named apart from a game (standings, tournament tables): their nickname, else their
    pseudonym; what the site shows and what a mail anyone may ask for (``standings``) shows."""
    return public_name("", settings, email, key) or _("a player")


def seat_label(seat: str, name: str) -> str:
    """``Evie (black)`` for a nickname, ``Black`` for a seat without one."""
    return name if name == seat.capitalize() else f"{name} ({seat})"


class PublicNames:
    """The public names of each game's seats. Settings are read once per address, each batch in
    a short transaction of its own, so writing a large site never holds the store for long."""

    def __init__(self, store: Store | None):
        self._store = store
        self._settings: dict[str, dict[str, Any]] = {}
        self._key = server_secret(store) if store is not None else None

    def _read(self, emails: list[str]) -> None:
        unknown = sorted({e for e in emails if e and e not in self._settings})
        if unknown and self._store is not None:
            with self._store.transaction(durable=False) as tx:
                for email in unknown:
                    self._settings[email] = tx.get_player(email)

    def of(self, row: GameRow) -> dict[str, str]:
        emails = players_of(row)
        self._read(list(emails.values()))
        return {seat: public_name(seat, self._settings.get(email), email, self._key)
                for seat, email in emails.items()}

    def has_nickname(self, email: str) -> bool:
        """Whether the player chose a name (``set nickname``): the others go by a pseudonym."""
        self._read([email])
        return public_name("", self._settings.get(email)) != ""

    def person(self, email: str) -> str:
        """A player named apart from a game (standings, tournament tables)."""
        self._read([email])
        return person_name(self._settings.get(email), email, self._key)


def public_record(value: Any, names: Mapping[str, str]) -> Any:
    """A copy of a record (or any part of one) fit to publish: a player's address becomes their
    public name (``names`` maps address to name), any other address (a moderator's) becomes
    "(address hidden)", and the players' entries keep only their public name."""
    if isinstance(value, Mapping):
        out = {key: public_record(item, names) for key, item in value.items()}
        players = value.get("players")
        if isinstance(players, Mapping) and "format" in value:
            out["players"] = {seat: {"name": names.get(str((info or {}).get("email", "")).lower(),
                                                       seat.capitalize())}
                              for seat, info in players.items()}
        return out
    if isinstance(value, list):
        return [public_record(item, names) for item in value]
    if isinstance(value, str) and "@" in value:
        known = names.get(value.strip().lower())
        if known is not None:
            return known
        return _ADDRESS.sub(lambda m: names.get(m.group(0).lower(), HIDDEN), value)
    return value


__all__ = ["HIDDEN", "PublicNames", "person_name", "pseudonym", "public_name", "public_record", "seat_label"]
