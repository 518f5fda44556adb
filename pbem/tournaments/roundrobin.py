"""Round robin: everyone plays everyone, once or twice, in rounds so that nobody plays two games
at once (or all at once, when the organizer allows it).

Two players a game: the circle method (Berger tables). One player stays, the others turn one
place each round (the first half of the circle has the first seat); with an odd number a "rest"
stays in the circle's fixed place, and whoever meets it sits the round out. So everyone has the
first seat in half their games (one more or one fewer with an odd count of games); a double round
robin repeats the cycle with the seats swapped.

At tables of three to five (``seating``): rounds are added until every two players have met at a
table, each round seating together as many pairs who have not met yet as it can.
"""

from __future__ import annotations

from collections.abc import Sequence

from pbem.tournaments.seating import table_round

REST = ""  # the empty place of an odd circle


def berger(players: Sequence[str]) -> list[list[tuple[str, str]]]:
    """The rounds of a single round robin, each a list of (first seat, second seat); players in
    seeding order (the strongest first)."""
    circle = list(players)
    if len(circle) < 2:
        return []
    if len(circle) % 2:
        circle.insert(0, REST)  # the rest stays put: everyone else turns, so every seat evens out
    n = len(circle)
    rounds = []
    for number in range(n - 1):
        pairs = []
        for i in range(n // 2):
            a, b = circle[i], circle[n - 1 - i]
            if i == 0 and number % 2:
                a, b = b, a  # the player who stays alternates; the others alternate by moving
            if REST not in (a, b):
                pairs.append((a, b))
        rounds.append(pairs)
        circle = [circle[0], circle[-1], *circle[1:-1]]
    return rounds


def schedule(players: Sequence[str], *, double: bool = False, table: int = 2,
             smallest: int = 3, largest: int | None = None) -> list[list[tuple[str, ...]]]:
    """Every round of the tournament, each a list of games (players in seat order)."""
    if table <= 2:
        single: list[list[tuple[str, ...]]] = [list(r) for r in berger(players)]
        if double:
            single += [[(b, a) for a, b in r] for r in single]
        return single
    rounds: list[list[tuple[str, ...]]] = []
    met: dict[frozenset[str], int] = {}
    seats: dict[str, list[int]] = {p: [] for p in players}
    wanted = {frozenset((a, b)) for i, a in enumerate(players) for b in players[i + 1:]}
    limit = 4 * len(players)
    while not wanted <= set(met) and len(rounds) < limit:
        tables = table_round(list(players), met, seats, table, smallest, None, largest)
        rounds.append(tables)
        for seated in tables:
            for i, a in enumerate(seated):
                seats[a].append(i)
                for b in seated[i + 1:]:
                    met[frozenset((a, b))] = met.get(frozenset((a, b)), 0) + 1
    if double:
        rounds += [[tuple(reversed(t)) for t in r] for r in rounds]
    return rounds


def all_at_once(rounds: list[list[tuple[str, ...]]]) -> list[list[tuple[str, ...]]]:
    """The whole schedule as one round (the organizer allowed several games at once)."""
    return [[game for r in rounds for game in r]] if rounds else []


def rests(players: Sequence[str], games: Sequence[tuple[str, ...]]) -> list[str]:
    """Who has no game in a round."""
    playing = {p for game in games for p in game}
    return [p for p in players if p not in playing]
