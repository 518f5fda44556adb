"""Text and HTML pictures of the board, and the legal-move listing for mails.

Each tile is a 5 x 3 block so that the 9 x 9 torus with coordinates fits in 60 columns of plain ASCII
(mail clients wrap at 72). The block shows edges on its sides, the hub (nexus, station, a wormhole's
shape, a joined planet) in the middle, arrows in the corners and ships next to their segment's edge.
``SpaceTruckinRenderer`` (``SpaceTruckin.renderer``) draws them, and hands the archive's SVG to ``svg``.
"""

from __future__ import annotations

import html
import textwrap
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import TYPE_CHECKING

from engine.base import Renderer
from engine.i18n import _
from engine.scoretable import WIDTH as MAIL_WIDTH

from . import moves as mv
from .catalogue import CORNERS, EDGES, ROTATIONS, SEG_DIRS, TILES
from .geometry import CELL_ORDER, CELLS, COLS, NEIGHBOURS, SIZE, cell_name
from .html_board import board_html, drawn_html, html_legend, pool_table
from .svg import svg_board, svg_defs, svg_legend
from .texts import local_segment, segment_name

if TYPE_CHECKING:
    from .state import SpaceTruckinState

def legend() -> str:
    return _("Edges: o planet (O: joined inside the tile), | - wormhole, blank void.\n"
             "Centre: + nexus, # station, | - straight, L J 7 r curve, O planet.\n"
             "* arrow. Ships: R B G Y W (owner's initial) beside their segment's edge.")
_CURVES = {(0, 1): "L", (0, 3): "J", (1, 2): "r", (2, 3): "7", (0, 2): "|", (1, 3): "-"}
# (line, column) in the block for a ship whose segment's first edge is N, E, S, W; a station's engineer.
_SHIP_POS = {0: (0, 3), 1: (1, 3), 2: (2, 3), 3: (1, 1), -1: (1, 1)}
_CORNER_POS = {0: (0, 4), 1: (2, 4), 2: (2, 0), 3: (0, 0)}


def tile_block(t: int, q: int, ships: dict[int, str] | None = None) -> list[str]:
    """Three 5-character lines picturing tile ``t`` at quarter turns ``q``; ships by segment."""
    tile = TILES[t]
    grid = [[" "] * 5 for _ in range(3)]
    for corner in range(4):
        line, col = _CORNER_POS[corner]
        grid[line][col] = "."
    for a in tile.arrows:
        line, col = _CORNER_POS[(a + q) % 4]
        grid[line][col] = "*"
    edges = EDGES[t][q]
    dirs = SEG_DIRS[t][q]
    joined = {d for s, seg in enumerate(tile.segments) if seg.kind == "planet" and len(dirs[s]) > 1
              for d in dirs[s]}
    edge_pos = {0: (0, 2), 1: (1, 4), 2: (2, 2), 3: (1, 0)}
    for d, kind in enumerate(edges):
        line, col = edge_pos[d]
        if kind == "P":
            grid[line][col] = "O" if d in joined else "o"
        elif kind == "W":
            grid[line][col] = "|" if d in (0, 2) else "-"
    centre = " "
    kinds = [seg.kind for seg in tile.segments]
    if tile.nexus:
        centre = "+"
    elif "station" in kinds:
        centre = "#"
    else:
        for s, seg in enumerate(tile.segments):
            if seg.kind == "wormhole" and len(dirs[s]) == 2:
                centre = _CURVES[dirs[s]]
        if centre == " " and joined:
            centre = "O"
    grid[1][2] = centre
    for s, seat in (ships or {}).items():
        seg = tile.segments[s]
        line, col = _SHIP_POS[dirs[s][0] if seg.kind != "station" else -1]
        grid[line][col] = seat[0].upper()
    return ["".join(row) for row in grid]


def _ships_on(state: SpaceTruckinState, cell: int, t: int) -> dict[int, str]:
    out = {}
    for s in range(len(TILES[t].segments)):
        seat = state.ship_at(cell, s)
        if seat:
            out[s] = seat
    return out


def _separator(left: bool, right: bool) -> str:
    """The column between two blocks: brackets around the blocks of the last move."""
    if left and right:
        return "|"
    return "]" if left else "[" if right else " "


def board_lines(state: SpaceTruckinState) -> list[str]:
    """The board, 9 blocks of 5 x 3 per row; the cells of the last move in brackets."""
    marked = set(state.last_move_cells())
    header = "   " + " ".join(f"  {c}  " for c in COLS)
    lines = [header.rstrip()]
    for row in range(SIZE - 1, -1, -1):
        blocks = []
        for col in range(SIZE):
            cell = row * SIZE + col
            placed = state.tile_at(cell)
            if placed is None:
                blocks.append(["     ", "     ", "     "])
            else:
                t, q = placed
                blocks.append(tile_block(t, q, _ships_on(state, cell, t)))
        mark = [row * SIZE + col in marked for col in range(SIZE)]
        seps = [_separator(col > 0 and mark[col - 1], col < SIZE and mark[col]) for col in range(SIZE + 1)]
        for i in range(3):
            label = str(row + 1) if i == 1 else " "
            body = "".join(seps[col] + blocks[col][i] for col in range(SIZE)) + seps[SIZE]
            lines.append(f"{label} {body} {label}".rstrip())
    lines.append(header.rstrip())
    return lines


def _drawn_lines(state: SpaceTruckinState) -> list[str]:
    t = state._drawn
    if t < 0:
        return []
    tile = TILES[t]
    if tile.black_hole:
        return [_("Drawn: {tile}, a black hole: remove a cargo, swap or pass.").format(tile=tile.id)]
    legal_q = {q for _, q in state._placements(t, state._quadrant)}
    allowed = tile.arrow_rotations(state._quadrant)
    out = [_("Drawn: {tile}, clock quadrant {quadrant}. Rotations:").format(
        tile=tile.id, quadrant=CORNERS[state._quadrant])]
    blocks = [tile_block(t, q) for q in range(4)]
    for i in range(3):
        out.append("  " + "     ".join(f"{b[i]}" for b in blocks).rstrip())
    marks = []
    for q in range(4):
        if q in legal_q:
            mark = _("legal")
        elif q not in allowed:
            mark = _("arrow")
        else:
            mark = _("no fit")
        marks.append((ROTATIONS[q], mark))
    width = max(6, *(len(mark) for _q, mark in marks))
    out.append(" " + "".join(f"{f'{r:>3} {mark:<{width}}':<{width + 4}}" for r, mark in marks).rstrip())
    out.append(_("  (arrow: the arrow forbids it; no fit: no free cell takes it)"))
    return out


def _pool_lines(state: SpaceTruckinState) -> list[str]:
    """Points and ships of each seat, in columns."""
    totals = state.score().totals
    pools = state.pools()
    dropped = state.dropped_seats
    lines = []
    for seat in state.seats:
        p = pools[seat]
        lines.append(_("{seat} {points} pts  pool {pool}  reserve {reserve}  on board {on_board}  "
                       "lost {lost}").format(seat=f"{seat:<7}", points=f"{totals[seat]:>3}", pool=p["pool"],
                             reserve=p["reserve"], on_board=p["on_board"], lost=p["lost"])
                     + (_("  DROPPED") if seat in dropped else ""))
    return lines


def _turn_lines(state: SpaceTruckinState, mark: str, ended: bool) -> list[str]:
    """The pile, the last move (``mark`` says how the board shows it) and who is to move (nobody
    once the game is over, also when it was ``ended`` before its last move)."""
    lines = [_("Tiles left in the pile: {n}.").format(n=state.tiles_left)]
    if state.last_move:
        where = _(" ({mark} on the board)").format(mark=mark) if state.last_move_cells() else ""
        seat, _sep, move = state.last_move.partition(": ")
        lines.append(_("Last move: {move}{where}.").format(
            move=f"{seat}: {mv.local_move_text(mv.parse(move, lambda _partial: []))}", where=where))
    if state.is_over or ended:
        lines.append(_("The game is over: see the final scores."))
    elif state.to_move:
        lines.append(_("To move: {seat}.").format(seat=state.to_move))
    else:
        lines.append(_("Waiting for the server to draw a tile."))
    return lines


def _ship_summary(state: SpaceTruckinState, t: int, placements: list[tuple[int, int]]) -> list[str]:
    tile = TILES[t]
    seat = state.to_move or ""
    pool = state.pools()[seat]["pool"] if seat else 0
    w = mv.words()
    if not tile.segments:
        return [_("Ships: this tile has no segment for a ship.")]
    if pool == 0:
        return [_("Ships: {seat} has no ship in the pool, so none can be deployed.").format(seat=seat)]
    lines = [_("Ships ({n} in {seat}'s pool), on the tile as drawn (rotation 0):").format(n=pool, seat=seat)]
    for s, seg in enumerate(tile.segments):
        role = w[mv.SEGMENT_SHIP[seg.kind]]
        if seg.kind == "station":
            lines.append(_("  {engineer} on the station: allowed at every placement.").format(
                engineer=w["engineer"]))
            continue
        blocked = [f"{cell_name(c)} {ROTATIONS[q]}" for c, q in placements
                   if state._seg_blocker(t, c, q, s) >= 0]
        name = local_segment(seg.describe(0))
        if not blocked:
            lines.append(_("  {ship} on the {segment}: allowed at every placement.").format(
                ship=role, segment=name))
        else:
            lines.append(_("  {ship} on the {segment}: not where its {kind} has a ship:").format(
                ship=role, segment=name, kind=segment_name(seg.kind)))
            lines.extend(_wrap(blocked, "    "))
    note = _("  (name a segment by any of its edges as placed: {example})")
    examples = list(islice(_edge_examples(state, placements), 12))  # the first that fits
    example = next((e for e in examples if len(note.format(example=e)) <= MAIL_WIDTH), None)
    if example is not None:
        lines.append(note.format(example=example))
    elif examples:  # none fits on the line in this language: the move on a line of its own
        head, _sep, tail = note.format(example=examples[0]).rpartition(": ")
        lines += [head + ":", "    " + tail]
    return lines


def _edge_examples(state: SpaceTruckinState, placements: list[tuple[int, int]]) -> Iterator[str]:
    """Moves with a ship named by an edge that the reader could write as they stand (a fixed
    example named a cell that may be taken, and a copied example was refused)."""
    for cell, q in placements:
        for option in state.ship_options(mv.Place(cell_name(cell), ROTATIONS[q]))[1:]:
            if option.edge is not None:
                yield mv.local_move_text(option)


def _rotations(quarters: Iterable[int]) -> str:
    qs = sorted(quarters)
    return _("any") if len(qs) == 4 else "/".join(str(ROTATIONS[q]) for q in qs)


def swap_groups(swaps: Iterable[mv.Swap]) -> list[str]:
    """Swaps grouped by their pair of cells: ``A1 0/90 C4 any`` stands for every swap with A1 at 0
    or 90 and C4 at any rotation. A pair of neighbours whose rotations do not combine freely gets
    several such groups, joined by "or"."""
    pairs: dict[tuple[str, str], dict[int, set[int]]] = {}
    for m in swaps:
        pairs.setdefault((m.cell_a, m.cell_b), {}).setdefault(m.rotation_a // 90, set()).add(
            m.rotation_b // 90)
    out = []
    for (a, b), by_a in pairs.items():
        products: dict[frozenset[int], list[int]] = {}
        for qa, qbs in sorted(by_a.items()):
            products.setdefault(frozenset(qbs), []).append(qa)
        out.append(_(" or ").join(f"{a} {_rotations(qas)} {b} {_rotations(qbs)}"
                               for qbs, qas in products.items()))
    return out


def _legal_black_hole(state: SpaceTruckinState) -> str:
    moves = state.legal_moves()
    w = mv.words()
    removes = [mv.local_move_text(m) for m in moves if isinstance(m, mv.Remove)]
    swaps = [m for m in moves if isinstance(m, mv.Swap)]
    lines = [_("You drew {tile}, a black hole. Choose one:").format(tile=state.drawn_tile)]
    if removes:
        lines.append(_("(a) {remove} a cargo from an incomplete wormhole:").format(remove=w["remove"]))
        lines.extend(_wrap(removes, "  "))
    else:
        lines.append(_("(a) {remove}: there is no cargo on an incomplete wormhole.").format(
            remove=w["remove"]))
    if swaps:
        groups = swap_groups(swaps)
        pairs = len({(m.cell_a, m.cell_b) for m in swaps})
        lines.append(_("(b) {swap} two tiles: {n} swaps of {pairs} pairs of cells.").format(
            swap=w["swap"], n=len(swaps), pairs=pairs))
        lines += _("  {swap} A1 90 C4 0 puts C4's tile on A1 at rotation 90 and A1's\n"
                   "  tile on C4 at rotation 0. Below, A1 0/90 C4 any means: A1 at 0\n"
                   "  or 90, C4 at any rotation (arrows do not matter in a swap).").format(
            swap=w["swap"]).split("\n")
        lines.extend(_wrap(groups, "  ", separator=";  "))
    else:
        lines.append(_("(b) {swap}: no two tiles can be exchanged.").format(swap=w["swap"]))
    lines.append(f"(c) {w['pass']}")
    return "\n".join(lines)


def _wrap(items: list[str], indent: str, width: int = 72, separator: str = ", ") -> list[str]:
    """Items run together on lines of at most ``width`` columns; an item never breaks, except one
    longer than a line, which breaks at its words."""
    lines: list[str] = []
    current = ""
    for item in items:
        if len(indent) + len(item) > width:
            if current:
                lines.append(indent + current)
                current = ""
            lines += textwrap.wrap(item, width, initial_indent=indent, subsequent_indent=indent + "  ")
            continue
        joined = current + separator + item if current else item
        if current and len(indent) + len(joined) + len(separator.rstrip()) > width:
            lines.append(indent + current + separator.rstrip())
            current = item
        else:
            current = joined
    if current:
        lines.append(indent + current)
    return lines


def _group_label(label: str) -> str:
    """``rotation 90`` -> ``place, rotation 90``; ``remove`` ... in the reader's words."""
    w = mv.words()
    if label.startswith("rotation"):
        return _("{place}, rotation {rotation}").format(place=w["place"], rotation=label.split()[1])
    return w.get(label, label)


SWAP_LINKS = 60  # at most this many swaps as one-tap links in a mail


class SpaceTruckinRenderer(Renderer["SpaceTruckinState"]):
    """Space Truckin's drawings: the mail board (text and HTML), the legal-move listing,
    and the archive's SVG (``svg``)."""

    def text(self, state: SpaceTruckinState, viewer: str | None, *, ended: bool = False) -> str:
        out = board_lines(state)
        out.append(legend())
        out.append("")
        out.extend(_drawn_lines(state))
        out += _pool_lines(state) + _turn_lines(state, _("in [ ]"), ended)
        return "\n".join(out)

    def html(self, state: SpaceTruckinState, viewer: str | None, *, ended: bool = False) -> str:
        out = [board_html(state), html_legend()]
        t = state._drawn
        if t >= 0 and TILES[t].black_hole:
            out.append(f"<p>{html.escape(_drawn_lines(state)[0])}</p>")
        elif t >= 0:
            legal = {q for _, q in state._placements(t, state._quadrant)}
            out.append(drawn_html(state, t, state._quadrant, legal))
        out.append(pool_table(state))
        out.append("<p>" + "<br/>".join(html.escape(line) for line in _turn_lines(state, _("framed"), ended))
                   + "</p>")
        return "\n".join(out)

    def legal(self, state: SpaceTruckinState, viewer: str | None) -> str:
        if state.is_over:
            return _("The game is over.")
        t = state._drawn
        if t < 0:
            return _("Waiting for the server to draw a tile.")
        tile = TILES[t]
        if tile.black_hole:
            return _legal_black_hole(state)
        placements = state._placements(t, state._quadrant)
        away: dict[int, list[int]] = {}
        near: dict[int, list[int]] = {}
        for cell, q in placements:
            touching = any(state.tile_at(n) is not None for n in NEIGHBOURS[cell])
            (near if touching else away).setdefault(cell, []).append(q)
        w = mv.words()
        lines = [_("You drew {tile} (clock quadrant {quadrant}). Write:").format(
                     tile=tile.id, quadrant=CORNERS[state._quadrant]),
                 _("  {place} CELL ROTATION [{cargo} EDGE | {battleship} EDGE | {engineer}]").format(**w)]
        if away:
            rots = sorted({q for qs in away.values() for q in qs})
            which = _("any rotation") if len(rots) == 4 else _("rotation {rotations}").format(
                rotations=_(" or ").join(str(ROTATIONS[q]) for q in rots))
            lines.append(_("Free cells away from all tiles: {n}, {which}.").format(n=len(away), which=which))
        if near:
            lines.append(_("Cells touching tiles:"))
            items = [f"{cell_name(c)} " + "/".join(str(ROTATIONS[q]) for q in near[c])
                     for c in sorted(near, key=cell_name)]
            lines.extend(_wrap(items, "  "))
        if not placements:
            lines.append(_("No legal placement."))
        lines.extend(_ship_summary(state, t, placements))
        return "\n".join(lines)

    def legal_groups(self, state: SpaceTruckinState, viewer: str | None
                     ) -> list[tuple[str, list[tuple[str, str]]]]:
        """Placements grouped by rotation ("rotation 90: A1 A2 ..."), then removals and passing.
        Swaps are tapped only when there are few: late in a game a black hole allows a thousand
        or more, which no one picks from a list of links; the text listing gives their form."""
        if state.is_over:
            return []
        groups: dict[str, list[tuple[str, str]]] = {}
        swaps: list[tuple[str, str]] = []
        for move in state.legal_moves():
            text = state.move_text(move)
            words = text.split()
            if words[0] == "place":
                groups.setdefault(f"rotation {words[2]}", []).append((words[1], text))
            elif words[0] == "swap":
                swaps.append((" ".join(words[1:]), text))
            else:
                groups.setdefault(words[0], []).append((" ".join(words[1:]) or mv.words()[words[0]], text))
        if swaps and len(swaps) <= SWAP_LINKS:
            groups["swap"] = swaps
        order = sorted(groups, key=lambda label: (not label.startswith("rotation"),
                                                  int(label.split()[1]) if label.startswith("rotation")
                                                  else 0))
        return [(_group_label(label), groups[label]) for label in order]

    def svg_defs(self, state: SpaceTruckinState, prefix: str) -> str:
        return svg_defs(state, prefix)

    def svg_board(self, state: SpaceTruckinState, prefix: str, label: str) -> str:
        return svg_board(state, prefix, label)

    def svg_legend(self, state: SpaceTruckinState, prefix: str) -> str:
        return svg_legend(state, prefix)


__all__ = ["CELLS", "CELL_ORDER", "SpaceTruckinRenderer", "board_lines", "tile_block"]
