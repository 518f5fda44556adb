"""A league: divisions of at most N players by rating, each a round robin, and seasons; between
seasons the best of each division go up and the last go down.

The first season fills division 1 with the highest rated, then division 2, ...; the divisions are
made as even as they can be (ten players at most eight a division: five and five). After a
season, the top ``promote`` of every division but the first go up one, the bottom ``promote`` of
every division but the last go down one; players who left are taken out, newcomers join the last
division (a new last division opens when it would pass the size), and divisions that became too
small (fewer than three) are merged into the one above.
"""

from __future__ import annotations

from collections.abc import Sequence


def split(players: Sequence[str], size: int) -> list[list[str]]:
    """Players in rating order into divisions of at most ``size``, as even as possible."""
    if not players:
        return []
    count = -(-len(players) // size)
    base, extra = divmod(len(players), count)
    out, at = [], 0
    for i in range(count):
        n = base + (1 if i < extra else 0)
        out.append(list(players[at:at + n]))
        at += n
    return out


def next_season(divisions: Sequence[Sequence[str]], promote: int, leaving: set[str],
                newcomers: Sequence[str], size: int, smallest: int = 3) -> list[list[str]]:
    """The divisions of the next season, from this season's final order of each division (best
    first)."""
    moved: list[list[str]] = [list(d) for d in divisions]
    count = len(moved)
    ups = [list(d[:promote]) if i > 0 else [] for i, d in enumerate(divisions)]
    downs = [list(d[len(d) - promote:]) if i < count - 1 and len(d) > promote else []
             for i, d in enumerate(divisions)]
    for i in range(count):
        stay = [p for p in divisions[i] if p not in ups[i] and p not in downs[i]]
        came_down = downs[i - 1] if i > 0 else []
        came_up = ups[i + 1] if i + 1 < count else []
        moved[i] = _order(stay, came_down, came_up)
    moved = [[p for p in d if p not in leaving] for d in moved]
    for player in newcomers:
        if player in leaving or any(player in d for d in moved):
            continue
        if not moved or len(moved[-1]) >= size:
            moved.append([])
        moved[-1].append(player)
    merged: list[list[str]] = []
    for division in moved:
        if not division:
            continue
        if merged and len(division) < smallest:
            merged[-1] += division
        else:
            merged.append(division)
    if len(merged) > 1 and len(merged[-1]) < smallest:
        merged[-2] += merged.pop()
    return merged


def _order(stay: list[str], came_down: list[str], came_up: list[str]) -> list[str]:
    """A division's seeding for the next season: who came down first, then who stayed in their
    order, then who came up."""
    return [*came_down, *stay, *came_up]
