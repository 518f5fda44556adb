"""What the computer players know of Alien City: how to value a tower, when to claim, fast playouts.

Search moves are ``(piece, lot, claim)`` triples of indices (claim -1: none), applied with the state's
fast path (``sample_build``/``push_build``), which uses the same rules module as ``push``.

Tower values here are exact: the street distance of the rules is a breadth-first search through empty
lots, done on bitboards (bit i = lot i), so "how much would this tower score if claimed now" costs a
few microseconds. The scoring module stays the only judge of results (``AlienCityState.totals``);
these values only steer choices.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from engine.ai.knowledge import Knowledge, SearchParams, outcome_rewards
from engine.alien_city.board import (
    GREEN,
    IS_TOWER,
    LOT_INDEX,
    LOT_NAMES,
    N_LOTS,
    PIECE_COLOUR,
    SEATS,
)
from engine.alien_city.moves import BUILD_MOVES, Move
from engine.alien_city.scoring import BONUS_REACH
from engine.alien_city.state import AlienCityState, other_seat
from engine.alien_city.streets import BIT, NEIGHBOUR_BITS, grow, lots_of

SearchMove = tuple[int, int, int]


# Level 2 claims a tower when the claim gains at least this much at once, unless its caps would
# otherwise go unused (as many caps as moves left).
CLAIM_WORTH = 6
# Rewards: mostly win/draw/loss, a little of the margin (see engine.ai.knowledge.outcome_rewards).
MARGIN_WEIGHT = 0.2
MARGIN_SCALE = 8.0
# The evaluation of a position short of the end (see AlienCityKnowledge.evaluate).
CAP_DISCOUNT = 0.7
# How far (in lots) Stakes looks from each claimed tower.
STAKES_DEPTH = 12
EVAL_SCALE = 12.0


class Board:
    """Bitboards of one position (optionally with one more piece built), for tower values."""

    __slots__ = ("colour", "empty", "towers")

    def __init__(self, board: Sequence[int], extra_piece: int = -1, extra_lot: int = -1):
        empty = 0
        colour = [0, 0, 0, 0]  # structures by colour index
        towers = [0, 0, 0, 0]  # towers by colour index
        for i, cell in enumerate(board):
            if not cell:
                empty |= BIT[i]
                continue
            p = cell - 1
            colour[PIECE_COLOUR[p]] |= BIT[i]
            if IS_TOWER[p]:
                towers[PIECE_COLOUR[p]] |= BIT[i]
        if extra_lot >= 0:
            empty &= ~BIT[extra_lot]
            colour[PIECE_COLOUR[extra_piece]] |= BIT[extra_lot]
            if IS_TOWER[extra_piece]:
                towers[PIECE_COLOUR[extra_piece]] |= BIT[extra_lot]
        self.empty, self.colour, self.towers = empty, colour, towers

    def tower_points(self, lot: int, colour: int, reach: int) -> int:
        """What the tower on ``lot`` scores if claimed: customers within ``reach`` times the street
        distance to the nearest other tower of its colour (0 when there is none)."""
        if not self.towers[colour] & ~BIT[lot]:
            return 0
        customers, distance = self.survey(lot, colour, reach)
        return customers * distance

    def survey(self, lot: int, colour: int, reach: int, layers: list[int] | None = None,
               depth: int = 0) -> tuple[int, int]:
        """(customers within ``reach``, distance to the nearest other tower of ``colour``, 0 if
        none) of the structure on ``lot``, by one breadth-first search through the empty lots.
        With ``layers``, also writes each empty lot's distance from it there, out to ``depth``."""
        empty = self.empty
        rivals = self.towers[colour] & ~BIT[lot]
        others = 0
        for c in range(4):
            if c != colour:
                others |= self.colour[c]
        reached = frontier = empty & NEIGHBOUR_BITS[lot]
        customers = 0
        distance = 0
        d = 1
        while frontier:
            if layers is not None and d <= depth:
                for x in lots_of(frontier):
                    layers[x] = d
            touched = grow(frontier)
            if d <= reach:
                customers |= touched & others
            if not distance and touched & rivals:
                distance = d
            if (distance or not rivals) and d >= max(reach, depth if layers is not None else 0):
                break
            frontier = touched & empty & ~reached
            reached |= frontier
            d += 1
        return (customers & ~BIT[lot]).bit_count(), distance

    def nearest(self, lot: int, targets: int, limit: int) -> tuple[int, int]:
        """(distance, bitboard of the structures of ``targets`` at that distance) within ``limit``
        of the structure on ``lot``; (0, 0) when none is that near."""
        empty = self.empty
        targets &= ~BIT[lot]
        reached = frontier = empty & NEIGHBOUR_BITS[lot]
        d = 1
        while frontier and d <= limit:
            touched = grow(frontier)
            hit = touched & targets
            if hit:
                return d, hit
            frontier = touched & empty & ~reached
            reached |= frontier
            d += 1
        return 0, 0


class Stakes:
    """What a build would do to the claimed towers, estimated from one breadth-first search per
    claimed tower: a new structure of another colour within reach adds a customer (worth the
    tower's distance to its competition); a new tower of its colour nearer than the competition
    cuts that distance. Positive for the seat to move (its towers gain, the opponent's lose)."""

    __slots__ = ("towers",)

    def __init__(self, state: AlienCityState):
        board, cap = state.cells()
        view = Board(board)
        me = SEATS.index(state.to_move or SEATS[0]) + 1
        # (sign, colour, reach, competition distance, customers, layer of each lot)
        self.towers: list[tuple[int, int, int, int, int, list[int]]] = []
        for lot in range(N_LOTS):
            if not cap[lot]:
                continue
            colour = PIECE_COLOUR[board[lot] - 1]
            reach = int(state.options["handicap"][SEATS[cap[lot] - 1]]["reach"])
            layer = [0] * N_LOTS
            customers, distance = view.survey(lot, colour, reach, layer, STAKES_DEPTH)
            sign = 1 if cap[lot] == me else -1
            self.towers.append((sign, colour, reach, distance, customers, layer))

    def value(self, piece: int, lot: int) -> float:
        colour = PIECE_COLOUR[piece]
        tower = IS_TOWER[piece]
        total = 0.0
        for sign, c, reach, distance, customers, layer in self.towers:
            k = layer[lot]
            if not k:
                continue
            near = k - 1 if k > 1 else 1  # a structure on a layer-k lot touches layer k - 1
            if colour != c:
                if near <= reach:
                    total += sign * distance
            elif tower and not distance:
                total += sign * customers * near  # the tower's first competitor: it starts to score
            elif tower and near < distance:
                total -= sign * customers * (distance - near)
        return total


SEARCH = SearchParams(exploration=0.4, widen_base=8, widen_factor=1.5, widen_power=0.5)


@dataclass(frozen=True)
class Style:
    """How a level plays: the knobs of the search that differ between levels 3 and 4."""

    green_aware: bool = False  # playout claims weigh Control Guild bonuses and the rival's use
    forced_claims: bool = False  # playouts spend every cap before the last moves
    horizon: int | None = None  # playouts stop after this many plies and evaluate; None: to the end
    prior: str = "lead"  # root order: "lead" (lead right after the move) or "eval" (evaluate())
    order: str = "random"  # order below the root: "random" or "stakes" (Stakes.value)
    policy: str = "random"  # playout builds: "random" or "stakes" (best of a few random by Stakes)
    params: SearchParams = SEARCH


STYLES = {
    3: Style(),
    4: Style(green_aware=True, forced_claims=True, order="stakes"),
}


class AlienCityKnowledge(Knowledge[AlienCityState]):
    """Levels 1-4; levels 3 and 4 differ by their :class:`Style`."""

    def __init__(self, level: int, style: Style | None = None):
        self.level = level
        self.style = style or STYLES.get(level, STYLES[3])
        self.params = self.style.params

    # --- evaluation -------------------------------------------------------------------------------
    def rewards(self, state: AlienCityState) -> list[float]:
        totals = state.totals()
        return outcome_rewards([totals[s] for s in SEATS], [True, True], MARGIN_WEIGHT, MARGIN_SCALE)

    @staticmethod
    def _lead(state: AlienCityState, seat: str) -> int:
        totals = state.totals()
        return totals[seat] - totals[other_seat(seat)]

    @staticmethod
    def _after(state: AlienCityState, piece: int, lot: int, claim: int) -> AlienCityState:
        s = state.copy()
        s.push_build(piece, lot, claim)
        return s

    def _scored(self, state: AlienCityState, rng: random.Random, claims_for: int
                ) -> list[tuple[float, int, SearchMove]]:
        """(immediate lead after it, tie-break, move) for every build, and for claims added to the
        ``claims_for`` builds that lead most (claims on game-ending builds are not moves)."""
        seat = state.to_move
        assert seat is not None
        builds = [(m.piece, m.lot_index) for m in state.legal_moves()]
        rng.shuffle(builds)
        scored = [(float(self._lead(self._after(state, p, lot, -1), seat)), k, (p, lot, -1))
                  for k, (p, lot) in enumerate(builds)]
        if not state.caps_left(seat):
            return scored
        targets = state.claimable_lots()
        best_builds = sorted(scored, key=lambda e: (-e[0], e[1]))[:claims_for]
        for _, k, (p, lot, _) in best_builds:
            if state.is_ending(BUILD_MOVES[p][lot]):
                continue
            for x in [*targets, lot] if IS_TOWER[p] else targets:
                scored.append((float(self._lead(self._after(state, p, lot, x), seat)), k, (p, lot, x)))
        return scored

    def greedy_move(self, state: AlienCityState, rng: random.Random) -> Move:
        seat = state.to_move
        assert seat is not None
        scored = self._scored(state, rng, claims_for=N_LOTS * len(IS_TOWER))
        plain = {m[:2]: lead for lead, _, m in scored if m[2] < 0}
        urgent = state.caps_left(seat) >= sum(state.held(seat)) - 1
        worth = 1 if urgent else CLAIM_WORTH
        best = max((e for e in scored if e[2][2] < 0 or e[0] - plain[e[2][:2]] >= worth),
                   key=lambda e: (e[0], -e[1], e[2][2] >= 0))
        return self.engine_move(state, best[2])

    # --- search -----------------------------------------------------------------------------------
    def candidates(self, state: AlienCityState, rng: random.Random, root: bool) -> list[SearchMove]:
        if root:
            scored = self._scored(state, rng, claims_for=3)
            if self.style.prior == "eval":
                me = state.seats.index(state.to_move)
                scored = [(self.evaluate(self._after(state, *m))[me], k, m) for _, k, m in scored]
            scored.sort(key=lambda e: (-e[0], e[1]))
            return [m for _, _, m in scored]
        seat = state.to_move
        assert seat is not None
        moves = [(m.piece, m.lot_index, -1) for m in state.legal_moves()]
        rng.shuffle(moves)
        if self.style.order == "stakes":
            stakes = Stakes(state)
            if stakes.towers:
                moves.sort(key=lambda m: -stakes.value(m[0], m[1]))
        if not state.caps_left(seat):
            return moves
        board, _ = state.cells()
        view = Board(board)
        target = self._best_claim(state, view, seat, state.claimable_lots())
        if target < 0:
            return moves
        out: list[SearchMove] = []
        for k, (p, lot, _) in enumerate(moves):
            if k < 3:
                out.append((p, lot, target))
            out.append((p, lot, -1))
        return out

    def play(self, state: AlienCityState, move: SearchMove) -> None:
        state.push_build(*move)

    def search_move(self, state: AlienCityState, move: Move) -> SearchMove:
        claim = -1 if move.claim is None else LOT_INDEX[move.claim.upper()]
        return move.piece, move.lot_index, claim

    def engine_move(self, state: AlienCityState, move: SearchMove) -> Move:
        piece, lot, claim = move
        build = BUILD_MOVES[piece][lot]
        return build if claim < 0 else build.with_claim(LOT_NAMES[claim])

    # --- playouts ---------------------------------------------------------------------------------
    def rollout(self, state: AlienCityState, rng: random.Random) -> list[float]:
        style = self.style
        horizon = N_LOTS if style.horizon is None else state.ply + style.horizon
        forced = style.forced_claims
        while not state.is_over:
            if state.ply >= horizon:
                return self.evaluate(state)
            seat = state.to_move
            assert seat is not None
            built = state.sample_build(rng)
            assert built is not None
            if style.policy == "stakes" and rng.random() < 0.5:
                stakes = Stakes(state)
                if stakes.towers:
                    other = state.sample_build(rng)
                    if other is not None and stakes.value(*other) > stakes.value(*built):
                        built = other
            piece, lot = built
            claim = -1
            caps = state.caps_left(seat)
            if caps:
                left = sum(state.held(seat))
                # Spend the caps over the moves left; the last move cannot claim.
                if left <= 1 + (caps if forced else 0) or rng.random() * (left - 1) < caps:
                    board, _ = state.cells()
                    view = Board(board, piece, lot)
                    targets = state.claimable_lots()
                    if IS_TOWER[piece]:
                        targets.append(lot)
                    claim = (self._best_claim(state, view, seat, targets) if style.green_aware
                             else self._best_points(view, state, seat, targets))
            state.push_build(piece, lot, claim)
        return self.rewards(state)

    def evaluate(self, state: AlienCityState) -> list[float]:
        """Rewards for a position short of the end: the lead now, counting for each seat the towers
        its caps left would take (picked in turn, best first, at ``CAP_DISCOUNT`` of their points
        now), on a logistic scale of ``EVAL_SCALE`` points."""
        totals = state.totals()
        board, _ = state.cells()
        view = Board(board)
        open_towers = state.claimable_lots()
        worth = {seat: {t: float(view.tower_points(t, PIECE_COLOUR[board[t] - 1], self._reach(state, seat)))
                        for t in open_towers} for seat in SEATS}
        caps = {seat: state.caps_left(seat) for seat in SEATS}
        expect = {seat: float(totals[seat]) for seat in SEATS}
        seat = state.to_move or SEATS[0]
        while open_towers and (caps[SEATS[0]] or caps[SEATS[1]]):
            if caps[seat]:
                best = max(open_towers, key=worth[seat].__getitem__)
                expect[seat] += CAP_DISCOUNT * worth[seat][best]
                open_towers.remove(best)
                caps[seat] -= 1
            seat = other_seat(seat)
        lead = expect[SEATS[0]] - expect[SEATS[1]]
        first = 1.0 / (1.0 + math.exp(-lead / EVAL_SCALE))
        return [first, 1.0 - first]

    @staticmethod
    def _reach(state: AlienCityState, seat: str) -> int:
        return int(state.options["handicap"][seat]["reach"])

    def _best_points(self, view: Board, state: AlienCityState, seat: str, targets: list[int]) -> int:
        """The target that would score most if claimed now (-1 if none scores)."""
        board, _ = state.cells()
        reach = self._reach(state, seat)
        best, best_points = -1, 0
        for t in targets:
            piece = board[t] - 1 if board[t] else -1
            colour = PIECE_COLOUR[piece] if piece >= 0 else self._colour_in(view, t)
            points = view.tower_points(t, colour, reach)
            if points > best_points:
                best, best_points = t, points
        return best

    @staticmethod
    def _colour_in(view: Board, lot: int) -> int:
        return next(c for c in range(3) if view.towers[c] >> lot & 1)

    def _best_claim(self, state: AlienCityState, view: Board, seat: str, targets: list[int]) -> int:
        """The claim worth most: the tower's points, plus for red and blue towers the Control Guild
        bonuses they would collect (nearest to an unclaimed green within reach), minus for a green
        tower the bonuses it stops paying the opponent; a tower the opponent could take next
        (its own best) counts a little more. -1 if nothing is worth a cap."""
        board, cap = state.cells()
        reach = self._reach(state, seat)
        other_reach = self._reach(state, other_seat(seat))
        me = SEATS.index(seat) + 1
        greens = [g for g in lots_of(view.towers[GREEN]) if not cap[g]]
        best, best_value = -1, 0.0
        for t in targets:
            colour = PIECE_COLOUR[board[t] - 1] if board[t] else self._colour_in(view, t)
            value = float(view.tower_points(t, colour, reach))
            theirs = float(view.tower_points(t, colour, other_reach))
            if colour == GREEN:
                value += self._green_swing(view, cap, t, me)
            else:
                for g in greens:
                    d, hit = view.nearest(g, view.towers[colour], BONUS_REACH)
                    if hit >> t & 1 and not any(cap[x] and cap[x] != me for x in lots_of(hit) if x != t):
                        value += 10 - 2 * d
            value += 0.25 * theirs
            if value > best_value:
                best, best_value = t, value
        return best

    @staticmethod
    def _green_swing(view: Board, cap: Sequence[int], green: int, me: int) -> float:
        """What claiming an unclaimed green tower changes in bonuses: those it would have paid the
        opponent are gained for me, those it would have paid me are lost."""
        swing = 0.0
        for colour in (0, 1):
            d, hit = view.nearest(green, view.towers[colour], BONUS_REACH)
            if not hit:
                continue
            owners = {cap[x] for x in lots_of(hit)}
            if len(owners) == 1 and 0 not in owners:
                swing += (10 - 2 * d) * (-1 if me in owners else 1)
        return swing


def knowledge(level: int) -> AlienCityKnowledge:
    return AlienCityKnowledge(level)


__all__ = ["STYLES", "AlienCityKnowledge", "Board", "Stakes", "Style", "knowledge"]
