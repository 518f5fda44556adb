"""A ladder: players stand in a line, the top first; anyone may challenge a player up to
ceil(sqrt(position)) places above (from place 9, places 6 to 8; from place 2, place 1), with at
most one open challenge of their own and two defences at a time, and the same two players meet
again only some days (14 by default) after their last game ended. A challenger who wins takes the
defender's place; the defender and everyone between move down one. Otherwise nothing moves.
Newcomers join at the bottom; a player who leaves is taken out and those below move up.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

MAX_OPEN = 1  # challenges a player may have open as challenger
MAX_DEFENCES = 2  # challenges a player may have to defend at once


@dataclass(frozen=True)
class Challenge:
    challenger: str
    defender: str
    open: bool  # False once its game ended
    ended_at: datetime | None = None


def reach(position: int) -> int:
    """How many places above a player at ``position`` (1 = top) may be challenged."""
    return math.ceil(math.sqrt(position)) if position > 1 else 0


def refusal(positions: Sequence[str], challenger: str, defender: str, challenges: Sequence[Challenge],
            now: datetime, rematch_days: float) -> tuple[str, dict[str, object]] | None:
    """Why ``challenger`` may not challenge ``defender`` now (a reason key and its values, for the
    caller to word), or None when they may."""
    if challenger not in positions:
        return "not-on-ladder", {}
    if defender not in positions:
        return "defender-not-on-ladder", {}
    if challenger == defender:
        return "self", {}
    mine, theirs = positions.index(challenger) + 1, positions.index(defender) + 1
    if theirs >= mine:
        return "below", {"position": mine}
    if mine - theirs > reach(mine):
        return "too-far", {"position": mine, "reach": reach(mine), "highest": mine - reach(mine)}
    if sum(1 for c in challenges if c.open and c.challenger == challenger) >= MAX_OPEN:
        return "open-challenge", {}
    if sum(1 for c in challenges if c.open and c.defender == defender) >= MAX_DEFENCES:
        return "defences", {}
    if any(c.open and {c.challenger, c.defender} == {challenger, defender} for c in challenges):
        return "already", {}
    last = max((c.ended_at for c in challenges if not c.open and c.ended_at
                and {c.challenger, c.defender} == {challenger, defender}), default=None)
    if last is not None and now < last + timedelta(days=rematch_days):
        return "rematch", {"after": last + timedelta(days=rematch_days)}
    return None


def after_game(positions: Sequence[str], challenger: str, defender: str, challenger_won: bool) -> list[str]:
    """The ladder after a challenge's game: the challenger takes the defender's place on a win."""
    order = list(positions)
    if not challenger_won or challenger not in order or defender not in order:
        return order
    mine, theirs = order.index(challenger), order.index(defender)
    if mine < theirs:
        return order  # the challenger has since climbed above the defender
    order.pop(mine)
    order.insert(theirs, challenger)
    return order


def challengeable(positions: Sequence[str], player: str) -> list[str]:
    """The players ``player`` may reach from their place (other limits aside)."""
    if player not in positions:
        return []
    mine = positions.index(player) + 1
    return list(positions[max(0, mine - 1 - reach(mine)):mine - 1])
