"""The statements of each player's own block list (table ``player_blocks``, migration 9), for both
databases, kept out of ``sql.py``: the transaction class there takes these methods from
``PlayerBlocksTx``.

A player's list is theirs alone (``block ADDRESS``); the moderators' ``blocked`` table, whose
addresses the whole server ignores, is another thing. Addresses are stored lower case.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pbem.store.common import dt_from_text, dt_to_text


class PlayerBlocksTx:
    """Mixed into the transaction class (``pbem.store.sql.SqlTx``), whose ``_c`` is the connection
    of the open transaction."""

    _c: Any

    def add_player_block(self, email: str, blocked: str, now: datetime) -> bool:
        """``email`` blocks ``blocked``; False when it already did (the date stays the first one)."""
        cur = self._c.run("INSERT INTO player_blocks (email, blocked, since) VALUES (?, ?, ?)"
                          " ON CONFLICT DO NOTHING", (email.lower(), blocked.lower(), dt_to_text(now)))
        return cur.rowcount == 1

    def remove_player_block(self, email: str, blocked: str) -> bool:
        cur = self._c.run("DELETE FROM player_blocks WHERE email = ? AND blocked = ?",
                          (email.lower(), blocked.lower()))
        return cur.rowcount == 1

    def player_blocks(self, email: str) -> list[tuple[str, datetime]]:
        """``email``'s list: (address, since), in the order they were blocked."""
        return [(r[0], dt_from_text(r[1])) for r in self._c.all(
            "SELECT blocked, since FROM player_blocks WHERE email = ? ORDER BY since, blocked",
            (email.lower(),))]

    def blocked_by(self, blocked: str) -> set[str]:
        """Every player whose list holds ``blocked``."""
        return {r[0] for r in self._c.all("SELECT email FROM player_blocks WHERE blocked = ?",
                                          (blocked.lower(),))}

    def move_player_blocks(self, old: str, new: str) -> None:
        """A player moves to a new address (``set address``): their list goes with them, and so does
        their place on others' lists (a block must not be escaped by moving). A row the new address
        already has is kept; the old one goes."""
        db = self._c
        old, new = old.lower(), new.lower()
        for column, other in (("email", "blocked"), ("blocked", "email")):
            db.run(f"UPDATE player_blocks SET {column} = ? WHERE {column} = ? AND {other} <> ? AND NOT"
                   f" EXISTS (SELECT 1 FROM player_blocks AS p WHERE p.{column} = ?"
                   f" AND p.{other} = player_blocks.{other})", (new, old, new, new))
            db.run(f"DELETE FROM player_blocks WHERE {column} = ?", (old,))
