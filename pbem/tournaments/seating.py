"""Seating players at tables of three to five (Space Truckin'), for round robin and Swiss rounds.

The sizes of a round's tables are as even as they can be and never below the smallest allowed
(``table_sizes``). Players are first seated in order (by score, for a Swiss), then a local
search swaps players between tables while the round gets better: fewer pairs who met before
(most important), then, in a Swiss, a smaller spread of scores at each table. The search is
deterministic (the order of the players decides), so a stored tournament gives the same round
again. Seats go to whoever sat furthest back on average so far.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


class SeatingError(ValueError):
    """The players cannot be seated at tables of the sizes allowed."""


def table_sizes(count: int, size: int, smallest: int = 3, largest: int | None = None) -> list[int]:
    """Tables for ``count`` players: as many tables of ``size`` as fit, evened out, none smaller
    than ``smallest`` and none larger than ``largest`` (the game's most players; ``size`` when not
    given): seven players at tables of three sit at a table of four and one of three."""
    if count < smallest:
        raise SeatingError(f"{count} players cannot fill a table of at least {smallest}")
    tables = -(-count // size)
    while tables > 1 and count // tables < smallest:
        tables -= 1
    base, extra = divmod(count, tables)
    sizes = [base + 1] * extra + [base] * (tables - extra)
    if max(sizes) > (largest or size):
        raise SeatingError(f"{count} players cannot sit at tables of {smallest} to {largest or size}")
    return sizes


def _cost(table: Sequence[str], met: Mapping[frozenset[str], int],
          spread: Mapping[str, float] | None) -> float:
    repeats = sum(met.get(frozenset((a, b)), 0) for i, a in enumerate(table) for b in table[i + 1:])
    cost = repeats * 1000.0
    if spread is not None:
        scores = [spread[p] for p in table]
        cost += (max(scores) - min(scores)) * 10.0
    return cost


def table_round(players: list[str], met: Mapping[frozenset[str], int], seats: Mapping[str, list[int]],
                size: int, smallest: int, spread: Mapping[str, float] | None,
                largest: int | None = None) -> list[tuple[str, ...]]:
    """One round's tables, players in seat order. ``met`` counts earlier meetings of each pair,
    ``seats`` each player's earlier seat numbers, ``spread`` their scores (None: scores do not
    matter, as in a round robin)."""
    sizes = table_sizes(len(players), size, smallest, largest)
    tables: list[list[str]] = []
    at = 0
    for n in sizes:
        tables.append(players[at:at + n])
        at += n
    improved = True
    rounds = 0
    while improved and rounds < 50:
        improved = False
        rounds += 1
        for i in range(len(tables)):
            for j in range(i + 1, len(tables)):
                for a in range(len(tables[i])):
                    for b in range(len(tables[j])):
                        before = _cost(tables[i], met, spread) + _cost(tables[j], met, spread)
                        tables[i][a], tables[j][b] = tables[j][b], tables[i][a]
                        after = _cost(tables[i], met, spread) + _cost(tables[j], met, spread)
                        if after < before - 1e-9:
                            improved = True
                        else:
                            tables[i][a], tables[j][b] = tables[j][b], tables[i][a]
    return [tuple(_seat_order(t, seats)) for t in tables]


def _seat_order(table: list[str], seats: Mapping[str, list[int]]) -> list[str]:
    """The first seat to whoever sat furthest back on average (then in the given order)."""
    def average(player: str) -> float:
        taken = seats.get(player) or []
        return sum(taken) / len(taken) if taken else 0.0
    return sorted(table, key=lambda p: (-average(p), table.index(p)))
