"""The Space Truckin' board as SVG for the archive site: a 9 x 9 torus of square tiles.

The look of each kind of tile never changes, so every kind is drawn once at rotation 0 in the page's
``defs`` and each ply only places rotated references and the ships. Every tile is one ``<use
class="tile">`` and every ship one ``<circle class="ship">``, with data attributes and a ``<title>``.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from engine import svg

from .catalogue import SEG_DIRS, TILES
from .geometry import COLS, SIZE, cell_name

if TYPE_CHECKING:
    from .state import SpaceTruckinState

_CELL = 44
_H = _CELL / 2
_SM = 20
_SPACE = "#0b1a33"
_PLANET = "#e69138"
_WORMHOLE = "#b4a7d6"
_STATION = "#cfe2f3"
LAST = "#ff40ff"  # the frame of the last move's cells, the same magenta as in the mail
_SEAT = {"red": "#e06666", "blue": "#6fa8dc", "green": "#93c47d", "yellow": "#ffd966", "white": "#ffffff"}
# Edge midpoints and unit vectors towards the centre, by direction N E S W.
_MID = ((_H, 0.0), (_CELL, _H), (_H, _CELL), (0.0, _H))
_INWARD = ((0, 1), (-1, 0), (0, -1), (1, 0))
_CORNER_XY = {0: (_CELL - 6, 6), 1: (_CELL - 6, _CELL - 6), 2: (6, _CELL - 6), 3: (6, 6)}


def _symbol_key(t: int) -> str:
    tile = TILES[t]
    return f"{tile.kind}-a{''.join(str(a) for a in tile.arrows)}"


def _tile_drawing(t: int) -> str:
    """A tile at rotation 0; placed tiles rotate it (quarter turns clockwise, as the engine does)."""
    tile = TILES[t]
    out = [f'<rect width="{_CELL}" height="{_CELL}" fill="#1c2f52" stroke="#5b6f94" stroke-width="1"/>']
    if tile.black_hole:
        out.append(f'<circle cx="{_H}" cy="{_H}" r="14" fill="#000" stroke="#999"/>')
        return "".join(out)
    for seg in tile.segments:
        if seg.kind == "planet":
            for d in seg.edges:  # a half disc on the edge, inside the tile; rotated from north
                out.append(f'<path d="M{_H - 11:g} 0 A11 11 0 0 0 {_H + 11:g} 0 Z" fill="{_PLANET}" '
                           f'transform="rotate({90 * d} {_H:g} {_H:g})"/>')
            if len(seg.edges) > 1:  # one planet across several edges: join them through the middle
                for d in seg.edges:
                    mx, my = _MID[d]
                    out.append(f'<line x1="{mx:g}" y1="{my:g}" x2="{_H}" y2="{_H}" stroke="{_PLANET}" '
                               'stroke-width="16"/>')
                out.append(f'<circle cx="{_H}" cy="{_H}" r="8" fill="{_PLANET}"/>')
        elif seg.kind == "wormhole":
            (ax, ay) = _MID[seg.edges[0]]
            if len(seg.edges) == 2:
                bx, by = _MID[seg.edges[1]]
                out.append(f'<path d="M{ax:g} {ay:g} Q{_H} {_H} {bx:g} {by:g}" fill="none" '
                           f'stroke="{_WORMHOLE}" stroke-width="6"/>')
            else:
                out.append(f'<line x1="{ax:g}" y1="{ay:g}" x2="{_H}" y2="{_H}" stroke="{_WORMHOLE}" '
                           'stroke-width="6"/>')
        elif seg.kind == "station":
            out.append(f'<rect x="{_H - 9}" y="{_H - 9}" width="18" height="18" rx="3" fill="{_STATION}" '
                       'stroke="#333"/>')
    if tile.nexus:
        out.append(f'<circle cx="{_H}" cy="{_H}" r="6" fill="{_WORMHOLE}" stroke="#fff" stroke-width="1"/>')
    for a in tile.arrows:
        cx, cy = _CORNER_XY[a]
        out.append(f'<path d="M{cx - 4:g} {cy - 4:g} L{cx + 4:g} {cy - 4:g} L{cx:g} {cy + 4:g} Z" '
                   f'fill="#fff2cc" transform="rotate({45 + 90 * a:g} {cx:g} {cy:g})"/>')
    return "".join(out)


def svg_defs(state: SpaceTruckinState, prefix: str) -> str:
    """One drawing per kind of tile in the catalogue, whatever this game has placed so far: the
    defs must serve every ply of the page."""
    seen: dict[str, int] = {}
    for t in range(len(TILES)):
        seen.setdefault(_symbol_key(t), t)
    return "".join(f'<g id="{prefix}{key}">{_tile_drawing(t)}</g>' for key, t in seen.items())


def _ship_xy(t: int, q: int, segment: int) -> tuple[float, float]:
    tile = TILES[t]
    dirs = SEG_DIRS[t][q][segment]
    if tile.segments[segment].kind == "station" or not dirs:
        return _H + 8, _H + 8
    d = dirs[0]
    mx, my = _MID[d]
    ix, iy = _INWARD[d]
    # Beside the segment's first edge, a little off its axis so the wormhole line stays visible.
    px, py = (7, 0) if d in (0, 2) else (0, 7)
    return mx + ix * 11 + px, my + iy * 11 + py


def svg_board(state: SpaceTruckinState, prefix: str, label: str) -> str:
    size = 2 * _SM + SIZE * _CELL
    out = [f'<svg {svg.XMLNS} class="board space-truckin" viewBox="0 0 {size} {size}" width="{size}" '
           f'height="{size}" role="img"><title>{escape(label)}</title>',
           f'<rect width="{size}" height="{size}" fill="#fff"/>',
           f'<rect x="{_SM}" y="{_SM}" width="{SIZE * _CELL}" height="{SIZE * _CELL}" fill="{_SPACE}"/>']
    for i in range(SIZE):
        x = _SM + i * _CELL + _H
        out.append(svg.text(x, _SM / 2, COLS[i]) + svg.text(x, size - _SM / 2, COLS[i]))
        y = _SM + (SIZE - 1 - i) * _CELL + _H
        out.append(svg.text(_SM / 2, y, str(i + 1)) + svg.text(size - _SM / 2, y, str(i + 1)))
    ships = []
    for cell in range(SIZE * SIZE):
        col, row = cell % SIZE, cell // SIZE
        x, y = _SM + col * _CELL, _SM + (SIZE - 1 - row) * _CELL
        placed = state.tile_at(cell)
        if placed is None:
            out.append(f'<rect x="{x}" y="{y}" width="{_CELL}" height="{_CELL}" fill="none" '
                       'stroke="#24385c" stroke-width="0.5"/>')
            continue
        t, q = placed
        name = cell_name(cell)
        out.append(f'<use class="tile" data-cell="{name}" data-tile="{svg.attr(TILES[t].id)}" '
                   f'href="#{prefix}{_symbol_key(t)}" '
                   f'transform="translate({x} {y}) rotate({90 * q} {_H:g} {_H:g})">'
                   f"<title>{escape(f'{name}: {TILES[t].id}, rotation {90 * q}')}</title></use>")
        for s, seg in enumerate(TILES[t].segments):
            seat = state.ship_at(cell, s)
            if seat is None:
                continue
            sx, sy = _ship_xy(t, q, s)
            about = f"{name}: {seat}'s ship on the {seg.describe(q)}"
            ships.append(f'<circle class="ship" data-seat="{svg.attr(seat)}" data-cell="{name}" '
                         f'cx="{x + sx:g}" cy="{y + sy:g}" r="5.5" fill="{_SEAT.get(seat, "#ccc")}" '
                         f'stroke="#000" stroke-width="1.5"><title>{escape(about)}</title></circle>')
    for cell in state.last_move_cells():
        x, y = _SM + (cell % SIZE) * _CELL, _SM + (SIZE - 1 - cell // SIZE) * _CELL
        out.append(f'<rect class="last-move" data-cell="{cell_name(cell)}" x="{x + 1.5:g}" y="{y + 1.5:g}" '
                   f'width="{_CELL - 3}" height="{_CELL - 3}" fill="none" stroke="{LAST}" '
                   'stroke-width="3"/>')
    out += ships  # above every tile, so a neighbour never covers a ship
    out.append("</svg>")
    return "".join(out)


def svg_legend(state: SpaceTruckinState, prefix: str) -> str:
    """What the symbols of the board mean, drawn with the page's own tile drawings (``svg_defs``)."""

    def item(drawing: str, meaning: str) -> str:
        return (f'<li><svg {svg.XMLNS} width="32" height="32" viewBox="0 0 {_CELL} {_CELL}" '
                f'aria-hidden="true">{drawing}</svg> {escape(meaning)}</li>')

    def tile(kind: str) -> str:
        t = next(i for i, tile in enumerate(TILES) if tile.kind == kind and not tile.arrows)
        return f'<use href="#{prefix}{_symbol_key(t)}"/>'

    ships = "".join(f'<circle cx="{6 + 8 * i}" cy="{_H}" r="4" fill="{_SEAT[seat]}" stroke="#000"/>'
                    for i, seat in enumerate(state.seats))
    frame = (f'<rect x="1.5" y="1.5" width="{_CELL - 3}" height="{_CELL - 3}" fill="{_SPACE}" '
             f'stroke="{LAST}" stroke-width="3"/>')
    arrow = next(t for t, tile in enumerate(TILES) if tile.kind == "void" and tile.arrows)
    return "".join([
        '<ul class="legend">',
        item(tile("straight"), "a wormhole (lilac) from edge to edge"),
        item(tile("junction3"), "wormholes meeting at a nexus"),
        item(tile("cap-straight"), "a planet (orange) at an edge"),
        item(tile("corner"), "a planet joined across two edges"),
        item(tile("station-wormhole"), "a station, with a wormhole ending at it"),
        item(f'<use href="#{prefix}{_symbol_key(arrow)}"/>', "an arrow (it only matters for placing)"),
        item(ships, "ships, in their owner's colour: " + ", ".join(state.seats)),
        item(frame, "the cells of the last move"),
        "</ul>",
    ])


__all__ = ["svg_board", "svg_defs", "svg_legend"]
