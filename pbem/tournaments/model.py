"""What the pure format modules take and give: players, games and their points.

A game of a tournament is seen as the players in seat order and their points once it is over
(1, 1/2, 0 for two players; by place at a table of three to five: ``place_points``). A game that
was decided without being played (a bye, a game forfeited by a player who withdrew) has
``played`` False: its points count, but it gives nobody an opponent for the tie-breaks.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Game:
    players: tuple[str, ...]  # seat order: players[0] had the first seat
    points: tuple[float, ...] | None = None  # per player, in the same order; None while running
    played: bool = True
    round: int = 0
    game_id: str | None = None

    @property
    def over(self) -> bool:
        return self.points is not None

    def points_of(self, player: str) -> float:
        assert self.points is not None
        return self.points[self.players.index(player)]

    def opponents(self, player: str) -> tuple[str, ...]:
        return tuple(p for p in self.players if p != player)

    def score_against(self, player: str, other: str) -> float:
        """1 when ``player`` finished above ``other`` in this game, 1/2 level, 0 below."""
        mine, theirs = self.points_of(player), self.points_of(other)
        return 1.0 if mine > theirs else 0.5 if mine == theirs else 0.0


def place_points(places: list[int]) -> list[float]:
    """Points for the places of a game (1 = first; equal places share): the share of the others
    one finished above, counting a tie as half. Two players: 1 / 0, or 1/2 each for a draw; a
    table of four: 1, 2/3, 1/3, 0. The points of a game add up to half its players, as in
    two-player games, so tables of different sizes and two-player games fit one scale."""
    count = len(places)
    if count < 2:
        return [1.0] * count
    points = []
    for mine in places:
        above = sum(1 for other in places if other > mine)
        level = sum(1 for other in places if other == mine) - 1
        points.append((above + level / 2) / (count - 1))
    return points


def places_from_totals(totals: list[float], winners: list[bool]) -> list[int]:
    """Places from final scores (winners first, then by points); equal players share a place."""
    keys = [(not won, -total) for total, won in zip(totals, winners, strict=True)]
    return [1 + sum(1 for other in keys if other < key) for key in keys]
