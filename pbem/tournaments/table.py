"""Points and tie-breaks: the table of a round robin, a Swiss or a league division.

Tie-breaks, chosen per tournament and applied in the order given:

- ``sonneborn-berger``: for every game played, the score against each opponent (1, 1/2, 0; at a
  table, above, level or below) times that opponent's points, summed (at a table divided by the
  number of opponents, so that it weighs like one two-player game);
- ``buchholz``: the opponents' points, summed (at a table divided likewise);
- ``median-buchholz``: Buchholz without the best and the worst opponent (with three or more);
- ``head-to-head``: among the players still level, the points scored in their games against one
  another;
- ``wins``: games won (at a table: first places, shared or not);
- ``rating``: the rating at the start of the tournament, higher first.

Games decided without being played (byes, forfeits of a withdrawn player) count their points but
no opponent: they add nothing to Sonneborn-Berger or Buchholz. Players level on everything share
a rank.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pbem.i18n import N_
from pbem.tournaments.model import Game

TIEBREAKS = ("sonneborn-berger", "buchholz", "median-buchholz", "head-to-head", "wins", "rating")
#: column heads of the tie-breaks (translated where shown: ``_(SHORT[name])``)
SHORT = {"sonneborn-berger": N_("SB"), "buchholz": N_("Buch"), "median-buchholz": N_("MBuch"),
         "head-to-head": N_("H2H"), "wins": N_("Wins"), "rating": N_("Rtg")}


@dataclass
class Line:
    player: str
    rank: int = 0
    points: float = 0.0
    played: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    values: dict[str, float] = field(default_factory=dict)  # tie-break -> value


def _finished(games: Sequence[Game], players: set[str]) -> list[Game]:
    return [g for g in games if g.over and any(p in players for p in g.players)]


def standings(players: Sequence[str], games: Sequence[Game], tiebreaks: Sequence[str],
              ratings: Mapping[str, float] | None = None) -> list[Line]:
    """The table, best first. ``players`` in their order of entry (the last resort: the earlier
    entrant first among players level on everything, who still share the rank)."""
    ratings = ratings or {}
    known = set(players)
    done = _finished(games, known)
    lines = {p: Line(p) for p in players}
    for game in done:
        best = max(game.points or (0,))
        for player in game.players:
            if player not in lines:
                continue
            line = lines[player]
            line.points += game.points_of(player)
            if not game.played:
                continue
            line.played += 1
            mine = game.points_of(player)
            if len(game.players) == 2:
                if mine == 1.0:
                    line.wins += 1
                elif mine == 0.0:
                    line.losses += 1
                else:
                    line.draws += 1
            elif mine == best:
                line.wins += 1
            else:
                line.losses += 1
    totals = {p: lines[p].points for p in players}
    for name in tiebreaks:
        if name == "head-to-head":
            continue
        for player in players:
            lines[player].values[name] = _value(name, player, done, totals, ratings)
    order = sorted(players, key=lambda p: -lines[p].points)
    groups = _split([order], lambda group, p: lines[p].points)
    for name in tiebreaks:
        if name == "head-to-head":
            groups = _split(groups, lambda group, p: _head_to_head(p, group, done))
            for group in groups:
                for player in group:
                    lines[player].values[name] = _head_to_head(player, group, done) if len(group) > 1 else 0.0
        else:
            groups = _split(groups, lambda group, p, n=name: lines[p].values[n])
    ranked: list[Line] = []
    for group in groups:
        rank = len(ranked) + 1
        for player in sorted(group, key=list(players).index):
            lines[player].rank = rank
            ranked.append(lines[player])
    return ranked


def _split(groups: list[list[str]], key) -> list[list[str]]:  # type: ignore[no-untyped-def]
    """Each group of level players cut into smaller groups by ``key`` (higher first)."""
    out: list[list[str]] = []
    for group in groups:
        values = {p: round(key(group, p), 9) for p in group}
        for value in sorted(set(values.values()), reverse=True):
            out.append([p for p in group if values[p] == value])
    return out


def _value(name: str, player: str, games: list[Game], totals: Mapping[str, float],
           ratings: Mapping[str, float]) -> float:
    if name == "rating":
        return float(ratings.get(player, 0.0))
    if name == "wins":
        wins = 0
        for game in games:
            if game.played and player in game.players:
                mine = game.points_of(player)
                wins += mine == max(game.points or (0,)) and (len(game.players) > 2 or mine == 1.0)
        return float(wins)
    contributions: list[float] = []
    total = 0.0
    for game in games:
        if not game.played or player not in game.players:
            continue
        others = game.opponents(player)
        weight = 1.0 / len(others)
        for other in others:
            if name == "sonneborn-berger":
                total += game.score_against(player, other) * totals.get(other, 0.0) * weight
            else:
                contributions.append(totals.get(other, 0.0) * weight)
    if name == "sonneborn-berger":
        return total
    if name == "median-buchholz" and len(contributions) >= 3:
        contributions = sorted(contributions)[1:-1]
    return sum(contributions)


def _head_to_head(player: str, group: list[str], games: list[Game]) -> float:
    members = set(group)
    total = 0.0
    for game in games:
        if player in game.players:
            for other in game.opponents(player):
                if other in members:
                    total += game.score_against(player, other) / max(1, len(game.players) - 1)
    return total


def crosstable(players: Sequence[str], games: Sequence[Game]) -> dict[tuple[str, str], list[float]]:
    """(player, opponent) -> the player's scores against that opponent, in round order."""
    cells: dict[tuple[str, str], list[float]] = {}
    for game in sorted(_finished(games, set(players)), key=lambda g: g.round):
        for player in game.players:
            for other in game.opponents(player):
                cells.setdefault((player, other), []).append(game.score_against(player, other))
    return cells


def fraction(value: float) -> str:
    """1, ½, 2½ as a table prints points; table points that are not halves with two decimals."""
    halves = round(value * 2)
    if abs(value * 2 - halves) > 1e-9:
        return f"{value:.2f}"
    whole, half = divmod(halves, 2)
    if not half:
        return str(whole)
    return f"{whole}½" if whole else "½"
