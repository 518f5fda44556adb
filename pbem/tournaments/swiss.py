"""Swiss pairing as a maximum-weight matching (networkx's blossom algorithm), not greedily.

Every two players who have not met are a possible pair; the weight of a pair says how good it
is, and the matching with the most pairs and, among those, the greatest total weight is taken.
What the weights encode, most important first:

1. colours: two players who both had the first seat more often (or both the second) would leave
   one of them two games off balance: the heaviest penalty, so the colour difference of every
   player stays within one whenever any pairing allows it;
2. scores: the squared difference of the two scores (in half points), so players meet their
   own score group, and a player who floats meets the nearest group;
3. inside a score group, ordered by rating (scores, then rating), the top half meets the bottom
   half (the Dutch system: first against the first of the lower half).

With an odd number of players one gets a bye (a point, no game): the lowest player by score and
rating who has not had one yet, chosen by the same matching (a "bye" node). Seats: the player who
had the first seat less often gets it; if level, whoever had the second seat last time; if still
level, the higher-ranked player.

Pairs meet at most once (no edge between players who met). At tables (three to five players) see
``swiss_tables``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import networkx as nx

from pbem.tournaments.seating import table_round

BYE = "\x00bye"
_BASE = 10**12
_COLOUR = 10**9
_SCORE = 10**5
_BYE = 10**8  # above any score difference, below the colours


@dataclass
class Record:
    """What the pairing needs to know of a player's tournament so far."""

    score: float = 0.0
    rating: float = 0.0
    opponents: set[str] = field(default_factory=set)
    seats: list[int] = field(default_factory=list)  # 0: first seat, 1: second, in round order
    byes: int = 0

    @property
    def colour_difference(self) -> int:
        return self.seats.count(0) - self.seats.count(1)


@dataclass
class Pairing:
    pairs: list[tuple[str, str]]  # (first seat, second seat)
    bye: str | None = None
    width: float | None = None  # the largest score difference the matching considered (None: any)


class PairingError(ValueError):
    """No pairing without a rematch exists (too many rounds for the players)."""


def ranked(records: Mapping[str, Record], order: Sequence[str]) -> list[str]:
    """Scores, then rating, then the order of entry."""
    return sorted(order, key=lambda p: (-records[p].score, -records[p].rating, list(order).index(p)))


def pair(records: Mapping[str, Record], order: Sequence[str]) -> Pairing:
    """The next round of two-player games for the players in ``records`` (``order``: entry order,
    the last tie-break of the ranking).

    The blossom algorithm costs about the cube of the players in pure Python (a second or more for
    200 players on a complete graph), so the matching is first sought among players at most half
    a point apart, then a point, then among all: a narrower try is kept only when it pairs
    everyone and puts no two players needing the same seats together, which a wider one would
    avoid, and gives the bye to the lowest player who has had none (it then takes the same pairs
    as the complete graph: the weights of wider pairs are only worth paying for those reasons)."""
    players = ranked(records, order)
    rank = {p: i for i, p in enumerate(players)}
    for limit in WIDTHS:
        try:
            found = _pair(records, players, rank, limit)
        except PairingError:
            if limit is None:
                raise
            continue
        if limit is None or (not any(_clash(records, a, b) for a, b in found.pairs)
                             and found.bye == _lowest_without_bye(records, players)):
            found.width = limit
            return found
    raise AssertionError("unreachable: the last width has no limit")


WIDTHS = (0.5, 1.0, None)  # the score differences tried, in points (None: every pair)


def _lowest_without_bye(records: Mapping[str, Record], players: list[str]) -> str | None:
    if len(players) % 2 == 0:
        return None
    least = min(records[p].byes for p in players)
    return [p for p in players if records[p].byes == least][-1]


def _clash(records: Mapping[str, Record], a: str, b: str) -> bool:
    da, db = records[a].colour_difference, records[b].colour_difference
    return (da > 0 and db > 0) or (da < 0 and db < 0)


def _pair(records: Mapping[str, Record], players: list[str], rank: Mapping[str, int],
          limit: float | None) -> Pairing:
    groups: dict[float, list[str]] = {}
    for p in players:
        groups.setdefault(records[p].score, []).append(p)
    in_group = {p: i for members in groups.values() for i, p in enumerate(members)}
    graph = nx.Graph()
    graph.add_nodes_from(players)
    for i, a in enumerate(players):
        ra = records[a]
        for b in players[i + 1:]:
            rb = records[b]
            if limit is not None and abs(ra.score - rb.score) > limit:
                continue
            if b in ra.opponents or a in rb.opponents:
                continue
            weight = _BASE
            da, db = ra.colour_difference, rb.colour_difference
            if (da > 0 and db > 0) or (da < 0 and db < 0):
                weight -= _COLOUR * min(abs(da), abs(db))
            gap = round(abs(ra.score - rb.score) * 2)
            weight -= _SCORE * gap * gap
            if gap == 0:
                half = len(groups[ra.score]) // 2
                weight -= abs(abs(in_group[a] - in_group[b]) - half)
            graph.add_edge(a, b, weight=weight)
    if len(players) % 2:
        least = min(records[p].byes for p in players)
        eligible = [p for p in players if records[p].byes == least]
        for below, p in enumerate(reversed(eligible)):
            # the lowest-ranked eligible player, unless the others could then not be paired
            graph.add_edge(BYE, p, weight=_BASE - _BYE * below)
    matching = nx.max_weight_matching(graph, maxcardinality=True)
    pairs: list[tuple[str, str]] = []
    bye = None
    for a, b in matching:
        if BYE in (a, b):
            bye = b if a == BYE else a
            continue
        pairs.append(_seats(records, a, b, rank))
    paired = {p for pair_ in pairs for p in pair_} | ({bye} if bye else set())
    if len(paired) != len(players):
        missing = sorted(set(players) - paired, key=rank.__getitem__)
        raise PairingError(f"no pairing without a rematch for {', '.join(missing)}")
    pairs.sort(key=lambda ab: min(rank[ab[0]], rank[ab[1]]))
    return Pairing(pairs, bye)


def _seats(records: Mapping[str, Record], a: str, b: str, rank: Mapping[str, int]) -> tuple[str, str]:
    ra, rb = records[a], records[b]
    if ra.colour_difference != rb.colour_difference:
        return (a, b) if ra.colour_difference < rb.colour_difference else (b, a)
    last_a = ra.seats[-1] if ra.seats else None
    last_b = rb.seats[-1] if rb.seats else None
    if last_a != last_b and None not in (last_a, last_b):
        return (a, b) if last_a == 1 else (b, a)
    return (a, b) if rank[a] < rank[b] else (b, a)


def swiss_tables(records: Mapping[str, Record], order: Sequence[str], size: int,
                 smallest: int = 3, largest: int | None = None) -> list[tuple[str, ...]]:
    """A Swiss round at tables: players in score order, seated by ``seating.table_round`` so that
    few pairs meet again and each table's scores are close."""
    players = ranked(records, order)
    met: dict[frozenset[str], int] = {}
    for p in players:
        for o in records[p].opponents:
            met[frozenset((p, o))] = 1
    seats = {p: list(records[p].seats) for p in players}
    return table_round(players, met, seats, size, smallest, {p: records[p].score for p in players}, largest)


def max_rounds(players: int) -> int:
    """The most rounds a Swiss of that many players can have without a rematch (with a bye for
    an odd count): a whole round robin."""
    return players - 1 if players % 2 == 0 else players
