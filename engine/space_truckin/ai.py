"""What the computer players know of Space Truckin': the value of a position, candidates, draws.

Why the search does not play random playouts: a game is about 80 plies of hidden draws, and a few
hundred random games from a position (all a move's budget allows) say less about it than the points
on the board do; measured, such a search lost to the greedy level (about 35 %). The search instead
stops at the position after each tree leaf and values it: the points if the game ended now
(``projected_totals``) plus what each ship still in the pool is worth while tiles are left
(``SHIP_VALUE`` at the start, falling to 0 at the end). That ship value is what greedy play lacks:
it spends a ship on every tile for one point and soon has none for the features that pay. The
tree (level 3: the ten best moves by that value at the root; level 4 also orders the other
seats' replies by it) then weighs each move against the tiles that may come and the replies.

Hidden information: a State holds no pile (it lives in the setup, which players are not given), so
the computer cannot read it; the search draws future tiles from ``unseen_tiles()`` (what everyone can
work out from the catalogue and the tiles seen), with a random clock quadrant.

Search moves are the game's own moves (``Place``, ``Remove``, ``Swap``, ``Pass``).
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from engine.ai.knowledge import Knowledge, SearchParams, outcome_rewards

from .catalogue import CORNERS, PILE_TILES, TILE_INDEX, TILES
from .moves import Move, Pass, Place, Swap
from .state import SpaceTruckinState

MARGIN_WEIGHT = 0.2
MARGIN_SCALE = 10.0
# At most this many placements far from every tile (alike for the score now) are weighed one by one.
ISOLATED_SAMPLE = 4
# Swaps of a black hole weighed at the root (there may be thousands).
SWAP_SAMPLE = 40


def _lead(totals: Mapping[str, int], seat: str) -> int:
    others = [v for s, v in totals.items() if s != seat]
    return totals[seat] - max(others) if others else 0


# Points a ship in the pool is worth at the start (in proportion to the tiles left later on).
SHIP_VALUE = 1.5
# Points of lead that make a position 73 % won, at the search's cut-off.
CUTOFF_SCALE = 6.0
# The moves the search weighs at the root: the best by value (greedy with ship value first).
ROOT_WIDTH = 10
# Level 4: sampled moves of a reply, ordered by value, at the tree's other decision nodes.
REPLY_SAMPLE = {4: 12}


class SpaceTruckinKnowledge(Knowledge[SpaceTruckinState]):
    # Plies of random play before a leaf is valued: 0 in the search (see the module docstring);
    # the bench sets it to measure the speed of whole random games.
    horizon = 0

    def __init__(self, level: int):
        self.level = level
        self.reply_sample = REPLY_SAMPLE.get(level, 0)
        self.params = SearchParams(exploration=0.4, widen_base=6, widen_factor=1.0, widen_power=0.5)

    # --- values -----------------------------------------------------------------------------------
    def rewards(self, state: SpaceTruckinState) -> list[float]:
        totals = state.projected_totals()
        dropped = set(state.dropped_seats)
        return outcome_rewards([totals[s] for s in state.seats], [s not in dropped for s in state.seats],
                               MARGIN_WEIGHT, MARGIN_SCALE)

    def values(self, state: SpaceTruckinState) -> dict[str, float]:
        """Each seat's points if the game ended now, plus the worth of its ships in the pool."""
        totals = state.projected_totals()
        if state.is_over:
            return {s: float(v) for s, v in totals.items()}
        left = SHIP_VALUE * state.tiles_left / len(PILE_TILES)
        pools = state.pools()
        return {s: v + left * pools[s]["pool"] for s, v in totals.items()}

    def estimate(self, state: SpaceTruckinState) -> list[float]:
        """Rewards at the search's cut-off: a logistic in each seat's lead by ``values``."""
        if state.is_over:
            return self.rewards(state)
        values = self.values(state)
        dropped = set(state.dropped_seats)
        return outcome_rewards([values[s] for s in state.seats], [s not in dropped for s in state.seats],
                               1.0, CUTOFF_SCALE)

    def _moves(self, state: SpaceTruckinState, rng: random.Random) -> list[Move]:
        """The moves worth weighing one by one: every placement next to a tile with each ship
        choice, a few placements far from all tiles (they are alike for the score now), removals,
        pass and a sample of swaps."""
        moves: list[Move] = []
        tile = state.drawn_tile
        if tile is not None and TILES[TILE_INDEX[tile]].black_hole:
            moves += state.removals()
            swaps = [m for m in state.legal_moves() if isinstance(m, Swap)]
            rng.shuffle(swaps)
            moves += swaps[:SWAP_SAMPLE]
            moves.append(Pass())
        else:
            near, far = [], []
            for place in state.legal_moves():
                assert isinstance(place, Place)
                (near if state.touches_tiles(place) else far).append(place)
            rng.shuffle(far)
            for place in near + far[:ISOLATED_SAMPLE]:
                moves += state.ship_options(place)
        rng.shuffle(moves)
        return moves

    def _scored(self, state: SpaceTruckinState, rng: random.Random, value: Any, sample: int = 0
                ) -> list[tuple[float, int, Move]]:
        """(the mover's lead by ``value`` right after it, tie-break, move) for ``_moves``."""
        seat = state.to_move
        assert seat is not None
        scored = []
        moves = self._moves(state, rng)
        if sample:
            moves = moves[:sample]
        for k, move in enumerate(moves):
            after = state.copy()
            after.push(move)
            scored.append((float(_lead(value(after), seat)), k, move))
        return scored

    def greedy_move(self, state: SpaceTruckinState, rng: random.Random) -> Move:
        best = max(self._scored(state, rng, SpaceTruckinState.projected_totals), key=lambda e: (e[0], -e[1]))
        return best[2]

    # --- search -----------------------------------------------------------------------------------
    def candidates(self, state: SpaceTruckinState, rng: random.Random, root: bool) -> Sequence[Move]:
        if root:
            scored = self._scored(state, rng, self.values)
            scored.sort(key=lambda e: (-e[0], e[1]))
            return [m for _, _, m in scored[:ROOT_WIDTH]]
        tile = state.drawn_tile
        if tile is not None and TILES[TILE_INDEX[tile]].black_hole:
            moves: list[Move] = [*state.removals(), Pass()]
        elif self.reply_sample:
            scored = self._scored(state, rng, self.values, self.reply_sample)
            scored.sort(key=lambda e: (-e[0], e[1]))
            return [m for _, _, m in scored]
        else:
            moves = [rng.choice(state.ship_options(p)) for p in state.legal_moves() if isinstance(p, Place)]
        rng.shuffle(moves)
        return moves

    def play(self, state: SpaceTruckinState, move: Move) -> None:
        state.push(move)

    def engine_move(self, state: SpaceTruckinState, move: Move) -> Move:
        return move

    def search_move(self, state: SpaceTruckinState, move: Move) -> Move:
        return state.parse_move(state.move_text(move))  # the canonical form candidates use

    def sample_chance(self, state: SpaceTruckinState, rng: random.Random
                      ) -> tuple[Hashable, Mapping[str, Any]]:
        """A tile the seat could draw (never the pile: only the tiles not yet seen), and a quadrant.
        Copies of a tile that play alike share a key (kind and arrows, and the quadrant when an
        arrow makes it matter)."""
        unseen = state.unseen_tiles()
        tile = unseen[int(rng.random() * len(unseen))]
        quadrant = CORNERS[int(rng.random() * 4)]
        info = TILES[TILE_INDEX[tile]]
        key = (info.kind, info.arrows, quadrant if info.arrows else None)
        return key, {"tile": tile, "quadrant": quadrant}

    def rollout(self, state: SpaceTruckinState, rng: random.Random) -> list[float]:
        """Random placements with random ships for ``horizon`` plies (none in the search); a black
        hole takes an opponent's cargo if it can. Then the position is valued (``estimate``)."""
        stop = state.ply + self.horizon
        while not state.is_over and state.ply < stop:
            if state.pending_chance() is not None:
                state.apply_chance(self.sample_chance(state, rng)[1])
                continue
            seat = state.to_move
            tile = state.drawn_tile
            if tile is not None and TILES[TILE_INDEX[tile]].black_hole:
                theirs = [m for m in state.removals() if state.cargo_owner(m) != seat]
                state.push(rng.choice(theirs) if theirs else Pass())
            else:
                state.push(state.random_move(rng))
        return self.estimate(state)


def knowledge(level: int) -> SpaceTruckinKnowledge:
    return SpaceTruckinKnowledge(level)


__all__ = ["SpaceTruckinKnowledge", "knowledge"]
