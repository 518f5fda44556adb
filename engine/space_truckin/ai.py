"""What the computer players know of Space Truckin': the value of a position, fast playouts, draws.

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

from .catalogue import CORNERS, TILE_INDEX, TILES
from .moves import Move, Pass, Place, Swap
from .state import SpaceTruckinState

MARGIN_WEIGHT = 0.2
MARGIN_SCALE = 10.0
# Playouts stop after this many plies and count the points of the position as if the game ended
# (incomplete features score too): the end of a long game is mostly noise to a decision now.
HORIZON = {3: 24, 4: 36}
# At most this many placements far from every tile (alike for the score now) are weighed one by one.
ISOLATED_SAMPLE = 4
# Swaps of a black hole weighed at the root (there may be thousands).
SWAP_SAMPLE = 40


def _lead(totals: Mapping[str, int], seat: str) -> int:
    others = [v for s, v in totals.items() if s != seat]
    return totals[seat] - max(others) if others else 0


class SpaceTruckinKnowledge(Knowledge[SpaceTruckinState]):
    def __init__(self, level: int):
        self.level = level
        self.horizon = HORIZON.get(level, HORIZON[3])
        self.params = SearchParams(exploration=0.4, widen_base=6, widen_factor=1.0, widen_power=0.5)

    # --- values -----------------------------------------------------------------------------------
    def rewards(self, state: SpaceTruckinState) -> list[float]:
        totals = state.projected_totals()
        dropped = set(state.dropped_seats)
        return outcome_rewards([totals[s] for s in state.seats], [s not in dropped for s in state.seats],
                               MARGIN_WEIGHT, MARGIN_SCALE)

    def _scored(self, state: SpaceTruckinState, rng: random.Random) -> list[tuple[float, int, Move]]:
        """(lead right after it, tie-break, move) for the moves worth weighing one by one: every
        placement next to a tile with each ship choice, a few placements far from all tiles (they
        are alike for the score now), removals, pass and a sample of swaps."""
        seat = state.to_move
        assert seat is not None
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
        scored = []
        for k, move in enumerate(moves):
            after = state.copy()
            after.push(move)
            scored.append((float(_lead(after.projected_totals(), seat)), k, move))
        return scored

    def greedy_move(self, state: SpaceTruckinState, rng: random.Random) -> Move:
        best = max(self._scored(state, rng), key=lambda e: (e[0], -e[1]))
        return best[2]

    # --- search -----------------------------------------------------------------------------------
    def candidates(self, state: SpaceTruckinState, rng: random.Random, root: bool) -> Sequence[Move]:
        if root:
            scored = self._scored(state, rng)
            scored.sort(key=lambda e: (-e[0], e[1]))
            return [m for _, _, m in scored]
        tile = state.drawn_tile
        if tile is not None and TILES[TILE_INDEX[tile]].black_hole:
            moves: list[Move] = [*state.removals(), Pass()]
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
        """Random placements with random ships; a black hole takes an opponent's cargo if it can.
        Stops at the horizon and counts the points as if the game ended there."""
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
        return self.rewards(state)


def knowledge(level: int) -> SpaceTruckinKnowledge:
    return SpaceTruckinKnowledge(level)


__all__ = ["SpaceTruckinKnowledge", "knowledge"]
