"""The rules of Space Truckin': placement, ships, features, scoring, black holes, game end.

Seats can be dropped (``drop_seat``, a ``drop`` entry in the record): a dropped seat leaves the turn
order but keeps its ships and banked points (ruling 17 in help.py).

Features are kept in a union-find over segment nodes (``cell * 4 + segment``) with, per root, the count
of open edges, whether a joined edge crosses a seam, the number of ships and the member nodes. Placing a
tile only ever joins features, so it updates that structure incrementally; a black-hole swap can split
features, so it rebuilds the structure from the board (ten times a game at most).
"""

from __future__ import annotations

import difflib
import random
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from itertools import islice
from typing import Any

from engine.base import EngineError, Game, IllegalMoveError, NotationError, Score, SetupError, State
from engine.i18n import _, language, ngettext
from engine.scoretable import Row, prose, score_table

from . import moves as mv
from .catalogue import (
    CORNERS,
    DIRS,
    EDGES,
    MAX_SEGMENTS,
    PILE_TILES,
    POOL_SHIPS,
    RESERVE_SHIPS,
    ROTATIONS,
    SEG_AT,
    SEG_DIRS,
    START_TILE,
    TILE_INDEX,
    TILES,
)
from .geometry import CELL_ORDER, CELLS, NEIGHBOURS, RING, SEAM, cell_name, parse_cell
from .moves import Move, Pass, Place, Remove, Swap
from .texts import edge_name, local_event, local_label, local_segment, local_why, segment_name, ship_goes

START_CELL = parse_cell("E5")
_NODES = CELLS * MAX_SEGMENTS


@cache
def fitting_rotations(edges0: str, pattern: str) -> tuple[int, ...]:
    """Quarter turns of a tile (rotation-0 edges) that agree with a neighbour pattern ('?' = free)."""
    out = []
    for q in range(4):
        if all(p == "?" or p == edges0[(d - q) % 4] for d, p in enumerate(pattern)):
            out.append(q)
    return tuple(out)


@cache
def swap_fits(edges_to_a: str, pattern_a: str, edges_to_b: str, pattern_b: str,
              d: int) -> tuple[tuple[int, int], ...]:
    """(quarter turns at a, at b) that fit a tile with rotation-0 edges ``edges_to_a`` into a cell
    whose neighbours demand ``pattern_a``, and likewise at b. ``d`` is the direction from a to b
    when they are neighbours (their patterns then leave the shared edge free, '?', and the two
    tiles must match each other there), else -1."""
    ras = fitting_rotations(edges_to_a, pattern_a)
    rbs = fitting_rotations(edges_to_b, pattern_b)
    if d < 0:
        return tuple((ra, rb) for ra in ras for rb in rbs)
    back = (d + 2) % 4
    return tuple((ra, rb) for ra in ras for rb in rbs
                 if edges_to_a[(d - ra) % 4] == edges_to_b[(back - rb) % 4])


class Feature:
    """A snapshot of one feature, for scoring and display."""

    __slots__ = ("cells", "complete", "kind", "nodes", "seam")

    def __init__(self, kind: str, nodes: list[int], cells: set[int], seam: bool, complete: bool):
        self.kind, self.nodes, self.cells, self.seam, self.complete = kind, nodes, cells, seam, complete

    def key(self) -> tuple[int, ...]:
        return (min(self.cells), min(self.nodes))


class SpaceTruckinState(State):
    def __init__(self, game: Game, seats: Iterable[str], first: str):
        self.game = game
        self._seats = tuple(seats)
        n = len(self._seats)
        self._turn = self._seats.index(first)
        self._tile = [-1] * CELLS
        self._rot = [0] * CELLS
        self._face: list[str | None] = [None] * CELLS
        # _pat[c]: what the neighbours demand of cell c, direction by direction ('?' = no neighbour)
        self._pat = ["????"] * CELLS
        self._ship = [-1] * _NODES
        self._parent = list(range(_NODES))
        self._open = [0] * _NODES
        self._seam = [False] * _NODES
        self._nships = [0] * _NODES
        self._members: dict[int, list[int]] = {}
        self._pool = [POOL_SHIPS] * n
        self._reserve = [RESERVE_SHIPS] * n
        self._lost = [0] * n
        self._banked = [0] * n
        self._dropped: list[int] = []  # seat indices in the order they were dropped
        self._events: list[dict[str, Any]] = []
        self._undrawn = set(PILE_TILES)
        self._discarded: list[int] = []
        self._drawn = -1
        self._quadrant = -1
        self._need_draw = True
        self._ply = 0
        self._over = False
        self._last: str | None = None
        self._last_move: Move | None = None
        self._put(START_CELL, START_TILE, 0)

    # --- State interface: who and where ------------------------------------------------------------
    @property
    def seats(self) -> tuple[str, ...]:
        return self._seats

    @property
    def ply(self) -> int:
        return self._ply

    @property
    def to_move(self) -> str | None:
        if self._over or self._need_draw:
            return None
        return self._seats[self._turn]

    @property
    def is_over(self) -> bool:
        return self._over

    @property
    def last_move(self) -> str | None:
        return self._last

    @property
    def dropped_seats(self) -> tuple[str, ...]:
        return tuple(self._seats[i] for i in self._dropped)

    def last_move_cells(self) -> tuple[int, ...]:
        """The cells the last move changed (a placement, a removal, the two of a swap), for the
        boards to mark; none after a pass or before the first move."""
        move = self._last_move
        if isinstance(move, Swap):
            names: tuple[str, ...] = (move.cell_a, move.cell_b)
        elif isinstance(move, (Place, Remove)):
            names = (move.cell,)
        else:
            names = ()
        return tuple(c for c in (parse_cell(n) for n in names) if c is not None)

    @property
    def drawn_tile(self) -> str | None:
        return TILES[self._drawn].id if self._drawn >= 0 else None

    @property
    def quadrant(self) -> str | None:
        return CORNERS[self._quadrant] if self._drawn >= 0 else None

    @property
    def tiles_left(self) -> int:
        return len(self._undrawn)

    def unseen_tiles(self) -> list[str]:
        """Ids of the tiles not drawn yet, in catalogue order: what every player can work out from
        the catalogue and the tiles seen so far. (The order of the pile is not in a State at all:
        it lives in the setup, which the players are not given.)"""
        return [TILES[t].id for t in sorted(self._undrawn)]

    def removals(self) -> list[Remove]:
        """The cargo removals a drawn black hole allows (``legal_moves`` without the swaps)."""
        if self._drawn < 0 or not TILES[self._drawn].black_hole or self._over:
            return []
        return self._removals()

    def touches_tiles(self, move: Place) -> bool:
        """Whether a placement's cell has a placed neighbour (edges to match, features to join)."""
        cell = parse_cell(move.cell)
        return cell is not None and any(self._tile[n] >= 0 for n in NEIGHBOURS[cell])

    def cargo_owner(self, move: Remove) -> str | None:
        """Whose cargo a removal would take (None if no cargo is there)."""
        cell = parse_cell(move.cell)
        if cell is None or self._tile[cell] < 0 or move.edge not in DIRS:
            return None
        s = SEG_AT[self._tile[cell]][self._rot[cell]][DIRS.index(move.edge)]
        owner = self._ship[cell * MAX_SEGMENTS + s] if s >= 0 else -1
        return self._seats[owner] if owner >= 0 else None

    def projected_totals(self) -> dict[str, int]:
        """Each seat's points if the game ended now: banked points plus the final scoring of the
        incomplete features (the final totals once the game is over)."""
        totals = {seat: self._banked[i] for i, seat in enumerate(self._seats)}
        if not self._over:
            for event in self.final_scoring():
                for seat in event["seats"]:
                    totals[seat] += event["points"]
        return totals

    def copy(self) -> SpaceTruckinState:
        new = object.__new__(SpaceTruckinState)
        new.__dict__.update(self.__dict__)
        for name in ("_tile", "_rot", "_face", "_pat", "_ship", "_parent", "_open", "_seam", "_nships",
                     "_pool", "_reserve", "_lost", "_banked", "_discarded", "_dropped"):
            setattr(new, name, list(getattr(self, name)))
        new._members = {r: list(m) for r, m in self._members.items()}
        new._events = [dict(e) for e in self._events]
        new._undrawn = set(self._undrawn)
        return new

    # --- union-find ------------------------------------------------------------------------------------
    def _find(self, node: int) -> int:
        parent = self._parent
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    def _union(self, a: int, b: int) -> int:
        ra, rb = self._find(a), self._find(b)
        if ra == rb:
            self._open[ra] -= 2
            return ra
        if len(self._members[ra]) < len(self._members[rb]):
            ra, rb = rb, ra
        self._parent[rb] = ra
        self._members[ra].extend(self._members.pop(rb))
        self._open[ra] += self._open[rb] - 2
        self._seam[ra] = self._seam[ra] or self._seam[rb]
        self._nships[ra] += self._nships[rb]
        return ra

    def _put(self, cell: int, t: int, q: int) -> None:
        """Lay tile ``t`` at quarter turns ``q`` and join its segments to the neighbours'."""
        self._tile[cell] = t
        self._rot[cell] = q
        face = self._face[cell] = EDGES[t][q]
        pat = self._pat
        for d, n in enumerate(NEIGHBOURS[cell]):
            k = (d + 2) % 4
            p = pat[n]
            pat[n] = p[:k] + face[d] + p[k + 1:]
        base = cell * MAX_SEGMENTS
        dirs = SEG_DIRS[t][q]
        for s in range(len(dirs)):
            node = base + s
            self._parent[node] = node
            self._members[node] = [node]
            self._open[node] = len(dirs[s])
            self._seam[node] = False
            self._nships[node] = 1 if self._ship[node] >= 0 else 0
        seg_at = SEG_AT[t][q]
        nbs = NEIGHBOURS[cell]
        for d in range(4):
            s = seg_at[d]
            if s < 0:
                continue
            n = nbs[d]
            if self._face[n] is None:  # empty, or not yet re-laid during a rebuild
                continue
            tn = self._tile[n]
            ns = SEG_AT[tn][self._rot[n]][(d + 2) % 4]
            root = self._union(base + s, n * MAX_SEGMENTS + ns)
            if SEAM[cell][d]:
                self._seam[root] = True

    def _rebuild(self) -> None:
        self._parent = list(range(_NODES))
        self._members = {}
        self._face = [None] * CELLS
        self._pat = ["????"] * CELLS
        for cell in range(CELLS):
            if self._tile[cell] >= 0:
                self._put(cell, self._tile[cell], self._rot[cell])

    # --- features ----------------------------------------------------------------------------------------
    def _segment(self, node: int) -> Any:
        return TILES[self._tile[node // MAX_SEGMENTS]].segments[node % MAX_SEGMENTS]

    def _station_complete(self, cell: int) -> bool:
        return all(self._tile[c] >= 0 for c, _slot in RING[cell])

    def _feature(self, node: int) -> Feature:
        if self._segment(node).kind == "station":
            cell = node // MAX_SEGMENTS
            complete = self._station_complete(cell)
            seam = any(across and self._tile[c] >= 0 for c, across in RING[cell])
            return Feature("station", [node], {cell}, seam, complete)
        root = self._find(node)
        nodes = self._members[root]
        return Feature(self._segment(node).kind, list(nodes), {m // MAX_SEGMENTS for m in nodes},
                       self._seam[root], self._open[root] == 0)

    def features(self) -> list[Feature]:
        """Every feature on the board, in a stable order (by lowest cell)."""
        seen: set[int] = set()
        out = []
        for cell in range(CELLS):
            t = self._tile[cell]
            if t < 0:
                continue
            for s in range(len(TILES[t].segments)):
                node = cell * MAX_SEGMENTS + s
                key = node if TILES[t].segments[s].kind == "station" else self._find(node)
                if key in seen:
                    continue
                seen.add(key)
                out.append(self._feature(node))
        return out

    def _identity(self, f: Feature) -> frozenset[tuple[int, int]]:
        return frozenset((self._tile[n // MAX_SEGMENTS], n % MAX_SEGMENTS) for n in f.nodes)

    def _label(self, f: Feature) -> str:
        cells = " ".join(cell_name(c) for c in sorted(f.cells, key=cell_name))
        if f.kind == "station":
            return f"station at {cells}"
        return f"{f.kind} {cells}"

    def _majority(self, f: Feature) -> tuple[list[int], list[int]]:
        counts = [0] * len(self._seats)
        for node in f.nodes:
            owner = self._ship[node]
            if owner >= 0:
                counts[owner] += 1
        best = max(counts)
        if best == 0:
            return [], counts
        return [i for i, c in enumerate(counts) if c == best], counts

    def _score_completed(self, f: Feature, how: str) -> list[str]:
        winners, _rest = self._majority(f)
        label = self._label(f)
        if f.kind == "station":
            points, why = 9, "station 9"
        else:
            k = len(f.cells)
            points, why = (2, "2 tiles: 2") if k == 2 else (2 * k, f"{k} tiles x 2")
        if f.seam:
            points += 2
            why += " + 2 seam"
        names = [self._seats[w] for w in winners]
        shown = local_label(f.kind, sorted(cell_name(c) for c in f.cells))
        shown_why = local_why(f.kind, len(f.cells), points, f.seam, final=False)
        if not winners:
            return [_("{feature} is complete (no ships on it).").format(feature=shown)]
        msgs = [ngettext("{feature} is complete: {seats} scores {points} ({why}).",
                         "{feature} is complete: {seats} score {points} ({why}).", len(names)).format(
            feature=shown, seats=_(" and ").join(names), points=points, why=shown_why)]
        for w in winners:
            self._banked[w] += points
        bonus: list[str] = []
        if f.kind == "planet":
            for w in winners:
                if self._reserve[w] > 0:
                    self._reserve[w] -= 1
                    self._pool[w] += 1
                    bonus.append(self._seats[w])
                else:
                    msgs.append(_("{seat} has no reserve ship left for the planet bonus.").format(
                        seat=self._seats[w]))
            if bonus:
                msgs.append(_("Bonus ship from the reserve to the pool: {seats}.").format(
                    seats=", ".join(bonus)))
        self._events.append({
            "ply": self._ply + 1, "how": how, "kind": f.kind, "feature": label,
            "cells": sorted(cell_name(c) for c in f.cells), "points": points, "why": why,
            "seats": names, "seam": f.seam, "final": False, "bonus_ship": bonus,
        })
        self._return_ships(f)
        return msgs

    def _return_ships(self, f: Feature) -> None:
        for node in f.nodes:
            owner = self._ship[node]
            if owner >= 0:
                self._pool[owner] += 1
                self._ship[node] = -1
        root = f.nodes[0] if f.kind == "station" else self._find(f.nodes[0])
        self._nships[root] = 0

    def _final_points(self, f: Feature) -> tuple[int, str]:
        if f.kind == "station":
            k = sum(1 for c, _slot in RING[f.nodes[0] // MAX_SEGMENTS] if self._tile[c] >= 0)
            points, why = 1 + k, f"1 + {k} surrounding tiles"
        else:
            points, why = len(f.cells), f"{len(f.cells)} tile{'s' if len(f.cells) != 1 else ''} x 1"
        if f.seam:
            points += 2
            why += " + 2 seam"
        return points, why

    def _features_with_ships(self) -> Iterator[Feature]:
        """The features that carry a ship, in the order of ``features``: only they can score at the
        end, and skipping the others early keeps the final scoring cheap enough for a search."""
        seen: set[int] = set()
        ship = self._ship
        for cell in range(CELLS):
            t = self._tile[cell]
            if t < 0:
                continue
            for s, seg in enumerate(TILES[t].segments):
                node = cell * MAX_SEGMENTS + s
                if seg.kind == "station":
                    if ship[node] >= 0:
                        yield self._feature(node)
                    continue
                root = self._find(node)
                if root in seen:
                    continue
                seen.add(root)
                if any(ship[m] >= 0 for m in self._members[root]):
                    yield self._feature(node)

    def final_scoring(self) -> list[dict[str, Any]]:
        """What the incomplete features would score if the game ended now."""
        out = []
        for f in self._features_with_ships():
            if f.complete:
                continue
            winners, _rest = self._majority(f)
            if not winners:
                continue
            points, why = self._final_points(f)
            out.append({
                "ply": self._ply, "how": "final", "kind": f.kind, "feature": self._label(f),
                "cells": sorted(cell_name(c) for c in f.cells), "points": points, "why": why,
                "seats": [self._seats[w] for w in winners], "seam": f.seam, "final": True,
                "bonus_ship": [],
            })
        return out

    # --- placements ----------------------------------------------------------------------------------
    def _pattern(self, cell: int, skip: int = -1) -> str:
        if skip < 0:
            return self._pat[cell]
        face = self._face
        out = []
        for d, n in enumerate(NEIGHBOURS[cell]):
            f = face[n]
            out.append("?" if f is None or n == skip else f[(d + 2) % 4])
        return "".join(out)

    def _placements(self, t: int, quadrant: int) -> list[tuple[int, int]]:
        tile = TILES[t]
        allowed = tile.arrow_rotations(quadrant)
        edges0 = tile.edges
        out = []
        tiles, pat, fit = self._tile, self._pat, fitting_rotations
        for cell in CELL_ORDER:
            if tiles[cell] < 0:
                for q in fit(edges0, pat[cell]):
                    if q in allowed:
                        out.append((cell, q))
        return out

    def legal_placement_texts(self) -> list[str]:
        """``E4 90``-style placements of the drawn tile; black-hole move texts when one is drawn."""
        if self._drawn < 0 or self._over:
            return []
        if TILES[self._drawn].black_hole:
            return [mv.move_text(m) for m in self.legal_moves()]
        return [f"{cell_name(c)} {ROTATIONS[q]}" for c, q in self._placements(self._drawn, self._quadrant)]

    def _seg_blocker(self, t: int, cell: int, q: int, s: int) -> int:
        """A node with a ship on the feature segment ``s`` would join, or -1."""
        for d in SEG_DIRS[t][q][s]:
            n = NEIGHBOURS[cell][d]
            tn = self._tile[n]
            if tn < 0:
                continue
            root = self._find(n * MAX_SEGMENTS + SEG_AT[tn][self._rot[n]][(d + 2) % 4])
            if self._nships[root]:
                return next(m for m in self._members[root] if self._ship[m] >= 0)
        return -1

    def move_variants(self, move: Move) -> list[Move]:
        """A placement with each ship it may deploy (``ship_options``); other moves have none."""
        return self.ship_options(move) if isinstance(move, Place) else [move]

    def ship_options(self, move: Place) -> list[Place]:
        """The ship deployments allowed with a placement (the move itself, without ship, first)."""
        cell = parse_cell(move.cell)
        base = Place(move.cell, move.rotation)
        out = [base]
        t = self._drawn
        if cell is None or t < 0 or self._pool[self._turn] == 0:
            return out
        q = move.rotation // 90
        for s, seg in enumerate(TILES[t].segments):
            if seg.kind == "station":
                out.append(Place(move.cell, move.rotation, "engineer"))
            elif self._seg_blocker(t, cell, q, s) < 0:
                edge = DIRS[SEG_DIRS[t][q][s][0]]
                out.append(Place(move.cell, move.rotation, mv.SEGMENT_SHIP[seg.kind], edge))
        return out

    # --- black holes -------------------------------------------------------------------------------
    def _removals(self) -> list[Remove]:
        out = []
        for cell in CELL_ORDER:
            t = self._tile[cell]
            if t < 0:
                continue
            q = self._rot[cell]
            for s, seg in enumerate(TILES[t].segments):
                node = cell * MAX_SEGMENTS + s
                if seg.kind == "wormhole" and self._ship[node] >= 0 \
                        and self._open[self._find(node)] > 0:
                    out.append(Remove(cell_name(cell), DIRS[SEG_DIRS[t][q][s][0]]))
        return out

    def swap_rotations(self, a: int, b: int) -> tuple[tuple[int, int], ...]:
        """Every legal (quarter turns at a, at b) for swapping the tiles on cells ``a`` and ``b``:
        the tile from b goes to a, the one from a to b. The one place that decides what swap is
        legal: the listing and the move checker both ask it, so they cannot disagree.

        "Both then satisfy the edge rule": each tile is checked against its new neighbours after
        the swap, so when a and b are neighbours the edge they share is checked between the two
        swapped tiles, never against the tile that has just left.
        """
        ta, tb = self._tile[a], self._tile[b]
        if a == b or ta < 0 or tb < 0:
            return ()
        nbs = NEIGHBOURS[a]
        d = nbs.index(b) if b in nbs else -1
        if d < 0:
            return swap_fits(TILES[tb].edges, self._pat[a], TILES[ta].edges, self._pat[b], -1)
        return swap_fits(TILES[tb].edges, self._pattern(a, b), TILES[ta].edges, self._pattern(b, a), d)

    def _swaps(self) -> list[Swap]:
        names, found = self._swap_table()
        return [Swap(names[i], ROTATIONS[ra], names[j], ROTATIONS[rb]) for i, j, ra, rb in found]

    def _swap_table(self) -> tuple[list[str], list[tuple[int, int, int, int]]]:
        """Legal swaps as index tuples, in canonical order (cells by name, then rotations); building
        move objects is the slow part, so ``random_move`` builds only the one it picks."""
        occupied = [c for c in CELL_ORDER if self._tile[c] >= 0]
        return [cell_name(c) for c in occupied], list(self._iter_swaps(occupied))

    def _iter_swaps(self, occupied: list[int]) -> Iterator[tuple[int, int, int, int]]:
        rotations = self.swap_rotations
        for i, a in enumerate(occupied):
            for j in range(i + 1, len(occupied)):
                for ra, rb in rotations(a, occupied[j]):
                    yield i, j, ra, rb

    def _first_moves(self, n: int) -> list[str]:
        """The first ``n`` legal moves as text, without listing them all (a black hole has
        thousands of swaps): the suggestions for a move of the wrong kind."""
        if not (self._drawn >= 0 and TILES[self._drawn].black_hole) or self._over:
            return [mv.move_text(m) for m in self.legal_moves()[:n]]
        occupied = [c for c in CELL_ORDER if self._tile[c] >= 0]
        swaps = [mv.move_text(Swap(cell_name(occupied[i]), ROTATIONS[ra], cell_name(occupied[j]),
                                   ROTATIONS[rb]))
                 for i, j, ra, rb in islice(self._iter_swaps(occupied), n)]
        removals = [mv.move_text(m) for m in self._removals()[:n - 1]]
        return [*[*removals, *swaps][:n - 1], "pass"]

    # --- moves ---------------------------------------------------------------------------------------
    def legal_moves(self) -> list[Move]:
        if self._over or self._need_draw or self._drawn < 0:
            return []
        if TILES[self._drawn].black_hole:
            return [*self._removals(), *self._swaps(), Pass()]
        return [Place(cell_name(c), ROTATIONS[q]) for c, q in self._placements(self._drawn, self._quadrant)]

    def random_move(self, rng: random.Random) -> Move:
        """A random legal move with a random ship choice (or none), so self-play deploys ships."""
        if self._drawn >= 0 and TILES[self._drawn].black_hole and not self._over:
            removals = self._removals()
            names, found = self._swap_table()
            k = rng.randrange(len(removals) + len(found) + 1)
            if k < len(removals):
                return removals[k]
            if k - len(removals) < len(found):
                i, j, ra, rb = found[k - len(removals)]
                return Swap(names[i], ROTATIONS[ra], names[j], ROTATIONS[rb])
            return Pass()
        placements = self._placements(self._drawn, self._quadrant) if self._drawn >= 0 else []
        if not placements:
            return rng.choice(self.legal_moves())  # raises IndexError like the base when none
        cell, q = rng.choice(placements)
        return rng.choice(self.ship_options(Place(cell_name(cell), ROTATIONS[q])))

    def _suggest(self, partial: str) -> list[str]:
        """The suggestions in the reader's words (they parse in any language)."""
        texts = self._suggest_texts(partial)
        if language() == "en":
            return texts
        return [mv.local_move_text(mv.parse(text, lambda _partial: [])) for text in texts]

    def _suggest_texts(self, partial: str) -> list[str]:
        """Legal moves near what was written: same prefix, else the nearest cells, else similar text."""
        if not partial.strip():
            return self._first_moves(5)
        moves = self.legal_moves()
        texts = [mv.move_text(m) for m in moves]
        if not texts:
            return []
        key = partial.strip().lower()
        words = key.split()
        if len(words) >= 3 and words[0] == "place":
            cell = parse_cell(words[1])
            if cell is not None and words[2].isdigit():
                place = Place(cell_name(cell), int(words[2]))
                if place in moves:
                    return [mv.move_text(m) for m in self.ship_options(place)][:5]
        starts = [t for t in texts if t.lower().startswith(key)]
        if starts:
            return starts[:5]
        cells = [c for c in (parse_cell(w) for w in key.split()) if c is not None]
        if cells:
            target = cells[0]

            def distance(text: str) -> int:
                c = parse_cell(text.split()[1]) if len(text.split()) > 1 else None
                if c is None:
                    return 99
                dc = abs(c % 9 - target % 9)
                dr = abs(c // 9 - target // 9)
                return min(dc, 9 - dc) + min(dr, 9 - dr)

            return sorted(texts, key=distance)[:5]
        return difflib.get_close_matches(key, texts, n=5, cutoff=0.5) or texts[:5]

    def parse_move(self, text: str) -> Move:
        return self._canonical(mv.parse(text, self._suggest), notation=True)

    def move_text(self, move: Move) -> str:
        return mv.move_text(self._canonical(move, notation=False))

    def local_move_text(self, move: Move) -> str:
        return mv.local_move_text(self._canonical(move, notation=False))

    def _canonical(self, move: Move, *, notation: bool) -> Move:
        """Names a segment by its first edge as placed; infers an unambiguous missing edge."""
        if isinstance(move, Swap):
            return move.canonical()
        if isinstance(move, Remove):
            cell = parse_cell(move.cell)
            if cell is None or self._tile[cell] < 0 or move.edge not in DIRS:
                return move
            t, q = self._tile[cell], self._rot[cell]
            s = SEG_AT[t][q][DIRS.index(move.edge)]
            if s >= 0:
                return Remove(move.cell, DIRS[SEG_DIRS[t][q][s][0]])
            return move
        if not isinstance(move, Place) or move.ship is None:
            return move
        if move.ship == "engineer":
            return Place(move.cell, move.rotation, "engineer") if move.edge else move
        t = self._drawn
        if t < 0 or TILES[t].black_hole or move.rotation not in ROTATIONS:
            return move
        q = move.rotation // 90
        kind = mv.SHIP_SEGMENT.get(move.ship)
        if move.edge is None:
            candidates = [s for s, seg in enumerate(TILES[t].segments) if seg.kind == kind]
            if len(candidates) == 1:
                return Place(move.cell, move.rotation, move.ship,
                             DIRS[SEG_DIRS[t][q][candidates[0]][0]])
            if notation and candidates:
                options = [mv.local_move_text(Place(move.cell, move.rotation, move.ship,
                                                    DIRS[SEG_DIRS[t][q][s][0]])) for s in candidates]
                raise NotationError(_("which {ship}? {tile} has {n} {kind} segments; name one by an edge.")
                                    .format(ship=mv.words()[move.ship], tile=TILES[t].id, n=len(candidates),
                                            kind=segment_name(kind or "")), suggestions=options)
            return move
        s = SEG_AT[t][q][DIRS.index(move.edge)] if move.edge in DIRS else -1
        if s >= 0 and TILES[t].segments[s].kind == kind:
            return Place(move.cell, move.rotation, move.ship, DIRS[SEG_DIRS[t][q][s][0]])
        return move

    def push(self, move: Move | str) -> list[str]:
        if isinstance(move, str):
            move = self.parse_move(move)
        if self._over:
            raise IllegalMoveError(_("the game is over."), rule="game over")
        if self._need_draw or self._drawn < 0:
            raise IllegalMoveError(_("no tile has been drawn yet: the server draws before each move."),
                                   rule="draw")
        move = self._canonical(move, notation=False)
        seat = self._seats[self._turn]
        black_hole = TILES[self._drawn].black_hole
        w = mv.words()
        if isinstance(move, Place):
            if black_hole:
                raise IllegalMoveError(
                    _("{tile} is a black hole: it is not placed; play {remove}, {swap} or {pass_}.").format(
                        tile=self.drawn_tile, remove=w["remove"], swap=w["swap"], pass_=w["pass"]),
                    suggestions=self._suggest(""), rule="black hole")
            msgs = self._do_place(move, seat)
        else:
            if not black_hole:
                raise IllegalMoveError(
                    _("{action} is a black-hole action, but you drew {tile}: place it.").format(
                        action=mv.local_move_text(move).split()[0], tile=self.drawn_tile),
                    suggestions=self._suggest(""), rule="black hole")
            if isinstance(move, Remove):
                msgs = self._do_remove(move, seat)
            elif isinstance(move, Swap):
                msgs = self._do_swap(move, seat)
            elif isinstance(move, Pass):
                msgs = [_("{seat} plays {tile} and does nothing.").format(seat=seat, tile=self.drawn_tile)]
            else:
                raise IllegalMoveError(_("not a Space Truckin' move: {move}").format(move=repr(move)),
                                       rule="notation")
        self._last = f"{seat}: {mv.move_text(move)}"
        self._last_move = move
        msgs += self._end_turn()
        return msgs

    def _end_turn(self) -> list[str]:
        self._ply += 1
        self._drawn = -1
        self._quadrant = -1
        if not self._undrawn:
            return self._finish()
        self._turn = self._next_seat(self._turn)
        self._need_draw = True
        return []

    def _next_seat(self, turn: int) -> int:
        """The seat after ``turn`` in seat order that is still in the game."""
        n = len(self._seats)
        return next(t for t in ((turn + k) % n for k in range(1, n + 1)) if t not in self._dropped)

    def drop_seat(self, seat: str) -> list[str]:
        """The seat leaves the turn order; the others play on (ruling 17).

        Its ships stay and count for majorities, its banked points stay, it cannot win. If it was
        its turn, the next seat still in the game plays the tile already drawn, with its quadrant:
        drawing again would give the table a second look at the pile. With one seat left the game
        ends with the usual final scoring.
        """
        if self._over:
            raise EngineError("the game is over: nobody can be dropped")
        if seat not in self._seats:
            raise EngineError(f"there is no seat {seat!r} in this game ({', '.join(self._seats)})")
        index = self._seats.index(seat)
        if index in self._dropped:
            raise EngineError(f"{seat} has already been dropped")
        self._dropped.append(index)
        msgs = [_("{seat} is dropped from the game: their ships stay on the board and still count, "
                  "their points stay, and they take no more turns.").format(seat=seat)]
        left = [s for i, s in enumerate(self._seats) if i not in self._dropped]
        if len(left) == 1:
            return msgs + self._finish(_("Only {seat} is left").format(seat=left[0]))
        if index == self._turn:
            self._turn = self._next_seat(index)
            after = self._seats[self._turn]
            if self._drawn >= 0:
                msgs.append(_("{next} plays the tile {seat} drew, {tile} (clock quadrant {quadrant}).")
                            .format(next=after, seat=seat, tile=self.drawn_tile, quadrant=self.quadrant))
            else:
                msgs.append(_("{seat} is the next to move.").format(seat=after))
        return msgs

    def _finish(self, why: str | None = None) -> list[str]:
        self._over = True
        self._need_draw = False
        self._drawn = -1
        why = why or _("The pile is empty")
        msgs = [_("{why}: the game is over. Final scoring of incomplete features:").format(why=why)]
        events = self.final_scoring()
        for event in events:
            event["ply"] = self._ply
            for seat in event["seats"]:
                self._banked[self._seats.index(seat)] += event["points"]
            msgs.append(f"  {local_event(event)[0]}: {_(' and ').join(event['seats'])} "
                        f"+{event['points']} ({local_event(event)[1]}).")
        if not events:
            msgs.append(_("  nothing to score."))
        self._events.extend(events)
        # The server names the winner, once, in its mail; the engine only gives the totals.
        msgs.append(_("Final totals: {totals}.").format(totals=self._totals_text(self.score().totals)))
        return msgs

    def _check_cell(self, text: str) -> int:
        cell = parse_cell(text)
        if cell is None:
            raise IllegalMoveError(_("{cell} is not a cell: columns A-I, rows 1-9.").format(cell=repr(text)),
                                   rule="cell")
        return cell

    def _check_rotation(self, rotation: int) -> int:
        if rotation not in ROTATIONS:
            raise IllegalMoveError(_("rotation {rotation} is not one of 0, 90, 180, 270.").format(
                rotation=rotation), rule="rotation")
        return rotation // 90

    def _edge_mismatches(self, cell: int, t: int, q: int, skip: int = -1) -> list[str]:
        edges = EDGES[t][q]
        out = []
        for d, n in enumerate(NEIGHBOURS[cell]):
            f = self._face[n]
            if f is None or n == skip:
                continue
            other = f[(d + 2) % 4]
            if other != edges[d]:
                out.append(_("its {edge} edge is {what} but the {other_edge} edge of {cell} ({tile}) "
                             "is {other}").format(edge=DIRS[d], what=edge_name(edges[d]),
                                                  other_edge=DIRS[(d + 2) % 4], cell=cell_name(n),
                                                  tile=TILES[self._tile[n]].id, other=edge_name(other)))
        return out

    def _do_place(self, move: Place, seat: str) -> list[str]:
        t = self._drawn
        tile = TILES[t]
        cell = self._check_cell(move.cell)
        q = self._check_rotation(move.rotation)
        if self._tile[cell] >= 0:
            raise IllegalMoveError(_("{cell} already holds {tile}.").format(
                cell=move.cell, tile=TILES[self._tile[cell]].id),
                                   suggestions=self._suggest(move.cell), rule="free cell")
        allowed = tile.arrow_rotations(self._quadrant)
        if q not in allowed:
            arrows = _(" and ").join(CORNERS[a] for a in tile.arrows)
            need = _(" or ").join(str(ROTATIONS[r]) for r in allowed)
            raise IllegalMoveError(
                ngettext("{tile} has an arrow in its {arrows} corner and the quadrant is {quadrant}: "
                         "rotate it {need} so an arrow lies in the {quadrant} corner (rotation "
                         "{rotation} puts it in {now}).",
                         "{tile} has an arrow in its {arrows} corners and the quadrant is {quadrant}: "
                         "rotate it {need} so an arrow lies in the {quadrant} corner (rotation "
                         "{rotation} puts them in {now}).", len(tile.arrows)).format(
                    tile=tile.id, arrows=arrows, quadrant=CORNERS[self._quadrant], need=need,
                    rotation=move.rotation,
                    now=_(" and ").join(CORNERS[(a + q) % 4] for a in tile.arrows)),
                suggestions=self._suggest(move.cell), rule="arrow")
        bad = self._edge_mismatches(cell, t, q)
        if bad:
            raise IllegalMoveError(
                _("{tile} at {cell} rotation {rotation} does not match: {why}.").format(
                    tile=tile.id, cell=move.cell, rotation=move.rotation, why="; ".join(bad)),
                suggestions=self._suggest(move.cell), rule="edge match")
        ship_seg = -1
        if move.ship is not None:
            ship_seg = self._check_ship(move, cell, t, q, seat)
        self._put(cell, t, q)
        where = _("{seat} places {tile} at {cell} rotation {rotation}").format(
            seat=seat, tile=tile.id, cell=move.cell, rotation=move.rotation)
        if ship_seg >= 0:
            node = cell * MAX_SEGMENTS + ship_seg
            self._ship[node] = self._turn
            self._pool[self._turn] -= 1
            root = node if tile.segments[ship_seg].kind == "station" else self._find(node)
            self._nships[root] += 1
            if move.ship == "engineer":
                where += _(" with an engineer on the station")
            elif move.ship == "cargo":
                where += _(" with a cargo on the {segment}").format(
                    segment=local_segment(tile.segments[ship_seg].describe(q)))
            else:
                where += _(" with a battleship on the {segment}").format(
                    segment=local_segment(tile.segments[ship_seg].describe(q)))
        msgs = [where + "."]
        done: dict[tuple[int, ...], Feature] = {}
        for s, seg in enumerate(tile.segments):
            node = cell * MAX_SEGMENTS + s
            if seg.kind != "station" and self._open[self._find(node)] == 0:
                f = self._feature(node)
                done.setdefault(f.key(), f)
        for c in (cell, *(c for c, _slot in RING[cell])):
            tc = self._tile[c]
            if tc < 0:
                continue
            for s, seg in enumerate(TILES[tc].segments):
                if seg.kind == "station" and self._station_complete(c):
                    f = self._feature(c * MAX_SEGMENTS + s)
                    done.setdefault(f.key(), f)
        for key in sorted(done):
            msgs += self._score_completed(done[key], "placement")
        return msgs

    def _check_ship(self, move: Place, cell: int, t: int, q: int, seat: str) -> int:
        tile = TILES[t]
        if move.ship not in mv.SHIP_SEGMENT:
            w = mv.words()
            raise IllegalMoveError(_("unknown ship {ship}: {cargo}, {battleship} or {engineer}.").format(
                ship=repr(move.ship), cargo=w["cargo"], battleship=w["battleship"], engineer=w["engineer"]),
                                   rule="ship deployment")
        if self._pool[self._turn] == 0:
            raise IllegalMoveError(_("{seat} has no ship in the pool to deploy; place the tile "
                                     "without a ship.").format(seat=seat),
                                   suggestions=[mv.local_move_text(Place(move.cell, move.rotation))],
                                   rule="ship deployment")
        kind = mv.SHIP_SEGMENT[move.ship]
        kinds = [seg.kind for seg in tile.segments]
        if kind not in kinds:
            raise IllegalMoveError(ship_goes(move.ship, tile.id),
                                   suggestions=[mv.local_move_text(m) for m in self.ship_options(move)],
                                   rule="ship deployment")
        if kind == "station":
            return kinds.index("station")
        if move.edge is None:
            raise IllegalMoveError(_("name the {kind} segment for the {ship} by one of its edges.").format(
                kind=segment_name(kind), ship=mv.words()[move.ship]),
                                   suggestions=[mv.local_move_text(m) for m in self.ship_options(move)],
                                   rule="ship deployment")
        s = SEG_AT[t][q][DIRS.index(move.edge)]
        if s < 0 or tile.segments[s].kind != kind:
            what = edge_name(EDGES[t][q][DIRS.index(move.edge)])
            raise IllegalMoveError(
                _("the {edge} edge of {tile} at rotation {rotation} is {what}, not a {kind} segment, "
                  "so no {ship} can go there.").format(
                    edge=move.edge, tile=tile.id, rotation=move.rotation, what=what,
                    kind=segment_name(kind), ship=mv.words()[move.ship]),
                suggestions=[mv.local_move_text(m) for m in self.ship_options(move)], rule="ship deployment")
        blocker = self._seg_blocker(t, cell, q, s)
        if blocker >= 0:
            owner = self._seats[self._ship[blocker]]
            bcell = cell_name(blocker // MAX_SEGMENTS)
            role = mv.SEGMENT_SHIP[kind]
            raise IllegalMoveError(
                _("the {segment} joins a {kind} that already carries a ship ({seat}'s {role} at "
                  "{cell}); a ship may only go on a feature without ships.").format(
                    segment=local_segment(tile.segments[s].describe(q)), kind=segment_name(kind),
                    seat=owner, role=mv.words()[role], cell=bcell),
                suggestions=[mv.local_move_text(m) for m in self.ship_options(move)], rule="ship deployment")
        return s

    def _do_remove(self, move: Remove, seat: str) -> list[str]:
        cell = self._check_cell(move.cell)
        t = self._tile[cell]
        options = [mv.local_move_text(m) for m in self._removals()]
        if t < 0:
            raise IllegalMoveError(_("{cell} is empty.").format(cell=move.cell), suggestions=options,
                                   rule="black hole")
        if move.edge not in DIRS:
            raise IllegalMoveError(_("{edge} is not an edge (N, E, S, W).").format(edge=repr(move.edge)),
                                   suggestions=options, rule="black hole")
        q = self._rot[cell]
        s = SEG_AT[t][q][DIRS.index(move.edge)]
        if s < 0 or TILES[t].segments[s].kind != "wormhole":
            raise IllegalMoveError(
                _("the {edge} edge of {cell} ({tile}) is {what}, not a wormhole segment.").format(
                    edge=move.edge, cell=move.cell, tile=TILES[t].id,
                    what=edge_name(EDGES[t][q][DIRS.index(move.edge)])),
                suggestions=options, rule="black hole")
        node = cell * MAX_SEGMENTS + s
        owner = self._ship[node]
        if owner < 0:
            raise IllegalMoveError(_("there is no cargo on the {segment} of {cell}.").format(
                segment=local_segment(TILES[t].segments[s].describe(q)), cell=move.cell),
                suggestions=options, rule="black hole")
        root = self._find(node)
        if self._open[root] == 0:
            raise IllegalMoveError(_("that wormhole is complete; only a cargo on an incomplete wormhole "
                                     "may be removed."), suggestions=options, rule="black hole")
        self._ship[node] = -1
        self._nships[root] -= 1
        self._lost[owner] += 1
        return [_("{seat} plays {tile}: {owner}'s cargo at {cell} {edge} is lost in an unknown universe.")
                .format(seat=seat, tile=self.drawn_tile, owner=self._seats[owner], cell=move.cell,
                        edge=move.edge)]

    def _swap_mismatches(self, a: int, b: int, ra: int, rb: int) -> str:
        """What breaks the edge rule in a swap that ``swap_rotations`` refused, for the reply."""
        ta, tb = self._tile[a], self._tile[b]
        adjacent = b in NEIGHBOURS[a]
        at = _("{tile} at {cell} rotation {rotation}: {why}")
        bad = [at.format(tile=TILES[tb].id, cell=cell_name(a), rotation=ROTATIONS[ra], why=m)
               for m in self._edge_mismatches(a, tb, ra, b if adjacent else -1)]
        bad += [at.format(tile=TILES[ta].id, cell=cell_name(b), rotation=ROTATIONS[rb], why=m)
                for m in self._edge_mismatches(b, ta, rb, a if adjacent else -1)]
        if adjacent:
            d = NEIGHBOURS[a].index(b)
            ea, eb = EDGES[tb][ra][d], EDGES[ta][rb][(d + 2) % 4]
            if ea != eb:
                bad.append(_("the two swapped tiles would meet {one} to {other} on the {edge} edge of "
                             "{cell}").format(one=edge_name(ea), other=edge_name(eb), edge=DIRS[d],
                                              cell=cell_name(a)))
        return "; ".join(bad)

    def _do_swap(self, move: Swap, seat: str) -> list[str]:
        a = self._check_cell(move.cell_a)
        b = self._check_cell(move.cell_b)
        ra = self._check_rotation(move.rotation_a)
        rb = self._check_rotation(move.rotation_b)
        if a == b:
            raise IllegalMoveError(_("a swap needs two different cells."), rule="black hole")
        for c in (a, b):
            if self._tile[c] < 0:
                raise IllegalMoveError(_("{cell} is empty: a swap exchanges two placed tiles.").format(
                    cell=cell_name(c)),
                                       rule="black hole")
        ta, tb = self._tile[a], self._tile[b]
        fits = self.swap_rotations(a, b)
        if (ra, rb) not in fits:
            raise IllegalMoveError(
                _("the swap breaks the edge rule: {why}.").format(why=self._swap_mismatches(a, b, ra, rb)),
                suggestions=[mv.local_move_text(Swap(cell_name(a), ROTATIONS[x], cell_name(b), ROTATIONS[y])
                                          .canonical()) for x, y in fits],
                rule="edge match")
        before = {self._identity(f) for f in self.features() if f.complete}
        for s in range(MAX_SEGMENTS):
            na, nb = a * MAX_SEGMENTS + s, b * MAX_SEGMENTS + s
            self._ship[na], self._ship[nb] = self._ship[nb], self._ship[na]
        self._tile[a], self._tile[b] = tb, ta
        self._rot[a], self._rot[b] = ra, rb
        self._rebuild()
        msgs = [_("{seat} plays {tile}: {one} moves to {cell_a} (rotation {rotation_a}) and {other} "
                  "to {cell_b} (rotation {rotation_b}).").format(
            seat=seat, tile=self.drawn_tile, one=TILES[tb].id, cell_a=move.cell_a,
            rotation_a=move.rotation_a, other=TILES[ta].id, cell_b=move.cell_b,
            rotation_b=move.rotation_b)]
        for f in sorted(self.features(), key=Feature.key):
            if not f.complete:
                continue
            carries = any(self._ship[n] >= 0 for n in f.nodes)
            if carries or self._identity(f) not in before:
                msgs += self._score_completed(f, "swap")
        return msgs

    # --- chance ----------------------------------------------------------------------------------
    def pending_chance(self) -> str | None:
        return "draw" if self._need_draw and not self._over else None

    def next_from_pile(self, pile: Iterable[str]) -> str:
        """The first tile of ``pile`` that has not been drawn yet."""
        for tile_id in pile:
            if TILE_INDEX.get(tile_id, START_TILE) in self._undrawn:
                return tile_id
        raise EngineError("the pile holds no tile that has not been drawn")

    def apply_chance(self, value: Mapping[str, Any]) -> list[str]:
        if self.pending_chance() is None:
            raise EngineError("no tile is due to be drawn now")
        if not isinstance(value, Mapping):
            raise EngineError(f"a draw is {{'tile': ID, 'quadrant': NE|SE|SW|NW}}, not {value!r}")
        tile_id = value.get("tile")
        quadrant = str(value.get("quadrant", "")).upper()
        t = TILE_INDEX.get(tile_id) if isinstance(tile_id, str) else None
        if t is None:
            raise EngineError(f"unknown tile {tile_id!r}")
        if t not in self._undrawn:
            raise EngineError(f"{tile_id} is not in the pile (already drawn, or the start tile)")
        if quadrant not in CORNERS:
            raise EngineError(f"quadrant must be NE, SE, SW or NW, not {value.get('quadrant')!r}")
        self._undrawn.discard(t)
        qd = CORNERS.index(quadrant)
        seat = self._seats[self._turn]
        msgs = [f"{seat} draws {tile_id} (clock quadrant {quadrant})."]
        if not TILES[t].black_hole and not self._placements(t, qd):
            self._discarded.append(t)
            msgs.append(f"{tile_id} has no legal placement with quadrant {quadrant} and is discarded.")
            if not self._undrawn:
                msgs += self._finish()
            return msgs
        self._drawn = t
        self._quadrant = qd
        self._need_draw = False
        return msgs

    # --- test and puzzle positions -------------------------------------------------------------------
    def arrange(self, tiles: Mapping[str, tuple[str, int]],
                ships: Mapping[tuple[str, str], str] | None = None, *,
                pile: Iterable[str] | None = None, keep_start: bool = True,
                reserve: Mapping[str, int] | None = None) -> None:
        """Lay out a position by hand (tests, puzzles, help examples); checks the edge rule.

        ``tiles`` maps a cell to (tile id, rotation); ``ships`` maps (cell, edge or "station") to a
        seat, taking the ship from that seat's pool; ``pile`` restricts the undrawn tiles;
        ``reserve`` overrides reserve sizes.
        """
        if not keep_start:
            self._tile = [-1] * CELLS
        self._ship = [-1] * _NODES
        for cell_text, (tile_id, rotation) in tiles.items():
            cell = parse_cell(cell_text)
            if cell is None or tile_id not in TILE_INDEX or rotation not in ROTATIONS:
                raise SetupError(f"bad tile entry {cell_text}: {tile_id} {rotation}")
            t = TILE_INDEX[tile_id]
            if TILES[t].black_hole:
                raise SetupError("black holes are never placed")
            self._tile[cell] = t
            self._rot[cell] = rotation // 90
        placed = {self._tile[c] for c in range(CELLS) if self._tile[c] >= 0}
        if len(placed) != sum(1 for c in range(CELLS) if self._tile[c] >= 0):
            raise SetupError("a tile is placed twice")
        self._face = [EDGES[t][self._rot[c]] if t >= 0 else None for c, t in enumerate(self._tile)]
        for cell in range(CELLS):
            t = self._tile[cell]
            bad = self._edge_mismatches(cell, t, self._rot[cell]) if t >= 0 else []
            if bad:
                raise SetupError(f"{TILES[t].id} at {cell_name(cell)} does not match: " + "; ".join(bad))
        for (cell_text, edge), seat in (ships or {}).items():
            cell = parse_cell(cell_text)
            if cell is None or self._tile[cell] < 0:
                raise SetupError(f"no tile at {cell_text} for a ship")
            t, q = self._tile[cell], self._rot[cell]
            if edge == "station":
                s = next((i for i, g in enumerate(TILES[t].segments) if g.kind == "station"), -1)
            else:
                s = SEG_AT[t][q][DIRS.index(edge)]
            if s < 0:
                raise SetupError(f"no segment at {cell_text} {edge}")
            owner = self._seats.index(seat)
            self._ship[cell * MAX_SEGMENTS + s] = owner
            self._pool[owner] -= 1
        self._rebuild()
        for seat, count in (reserve or {}).items():
            self._reserve[self._seats.index(seat)] = count
        self._undrawn = set(PILE_TILES) - placed
        if pile is not None:
            self._undrawn = {TILE_INDEX[x] for x in pile}
        if self._undrawn & placed:
            raise SetupError("a placed tile is still in the pile")

    # --- presentation (the drawing itself is SpaceTruckin.renderer's, see engine.base.State) ------
    def replay_info(self) -> dict[str, Any]:
        return {"tile": self.drawn_tile, "quadrant": self.quadrant, "tiles_left": len(self._undrawn)}

    def pools(self) -> dict[str, dict[str, int]]:
        on_board = [0] * len(self._seats)
        for owner in self._ship:
            if owner >= 0:
                on_board[owner] += 1
        return {seat: {"pool": self._pool[i], "reserve": self._reserve[i], "on_board": on_board[i],
                       "lost": self._lost[i]} for i, seat in enumerate(self._seats)}

    def _totals_text(self, totals: Mapping[str, int]) -> str:
        """``red 12, blue 9 (dropped)``: a dropped seat's points are shown, marked."""
        dropped = self.dropped_seats
        return ", ".join(f"{s} {v}" + (_(" (dropped)") if s in dropped else "") for s, v in totals.items())

    def score(self) -> Score:
        totals = {seat: self._banked[i] for i, seat in enumerate(self._seats)}
        details: dict[str, Any] = {"events": [dict(e) for e in self._events], "pools": self.pools(),
                                   "over": self._over}
        rows = []
        for event in self._events:
            tag = _("final") if event["final"] else _("move {number}").format(number=event["ply"])
            feature, why = local_event(event)
            rows.append(Row(f"{tag}: {feature} ({why})",
                            dict.fromkeys(event["seats"], f"+{event['points']}")))
        footer = [Row(_("Total"), totals)]
        if not self._over:
            provisional = {seat: 0 for seat in self._seats}
            for event in self.final_scoring():
                for seat in event["seats"]:
                    provisional[seat] += event["points"]
            details["provisional"] = provisional
            footer.append(Row(_("If the game ended now, add"),
                              {s: f"+{v}" for s, v in provisional.items()}))
        dropped = self.dropped_seats
        text = score_table(_("Final scores") if self._over else _("Scores so far"), self._seats,
                           rows or [Row(_("(nothing scored yet)"), {})], footer,
                           marks=dict.fromkeys(dropped, "*"))
        if dropped:
            text += "\n" + "\n".join(prose(_("* dropped from the game: the points stay, but a dropped "
                                              "player cannot win.")))
        return Score(totals=totals, text=text, details=details, dropped=list(dropped))

    # --- read access for rendering ------------------------------------------------------------
    def tile_at(self, cell: int) -> tuple[int, int] | None:
        t = self._tile[cell]
        return None if t < 0 else (t, self._rot[cell])

    def ship_at(self, cell: int, segment: int) -> str | None:
        owner = self._ship[cell * MAX_SEGMENTS + segment]
        return None if owner < 0 else self._seats[owner]
