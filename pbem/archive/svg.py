"""The boards as SVG for the archive site, drawn from the engines' public state.

Each game page shows every ply, so what does not change during a game (the Alien City tile layout,
the look of each Space Truckin' tile) is drawn once in ``defs`` and each ply only places references
and pieces: a 150-ply game stays a page of a few hundred kilobytes. Every element that stands for a
piece carries a class and data attributes (``structure``, ``tile``, ``ship``) so tests and readers
of the markup can count what is on the board, and a ``<title>`` so a hover says what it is.
"""

from __future__ import annotations

from html import escape
from typing import Any

from engine.alien_city.board import COLUMNS, LOT_NAMES, N_COLUMNS, N_ROWS, TILE_LOTS, TILE_OF
from engine.space_truckin.catalogue import SEG_DIRS, TILES
from engine.space_truckin.geometry import COLS, SIZE, cell_name

# --- shared ------------------------------------------------------------------------------------------

_SVG = 'xmlns="http://www.w3.org/2000/svg"'


def _attr(value: Any) -> str:
    return escape(str(value), quote=True)


def _text(x: float, y: float, text: str, size: int = 11, fill: str = "#333",
          anchor: str = "middle") -> str:
    return (f'<text x="{x:g}" y="{y:g}" font-size="{size}" fill="{fill}" text-anchor="{anchor}" '
            f'dominant-baseline="central" font-family="sans-serif">{escape(text)}</text>')


def defs(state: Any, prefix: str) -> str:
    """The shared drawings of one game page: an SVG of size 0 holding only ``defs``."""
    body = _ac_defs(state, prefix) if state.game.name == "alien-city" else _st_defs(prefix)
    return (f'<svg {_SVG} width="0" height="0" style="position:absolute" aria-hidden="true">'
            f"<defs>{body}</defs></svg>")


def board(state: Any, prefix: str, label: str) -> str:
    """One position; ``label`` becomes the SVG's accessible title."""
    if state.game.name == "alien-city":
        return _ac_board(state, prefix, label)
    return _st_board(state, prefix, label)


# --- Alien City: 8 x 10 lots in 20 tiles of 2 x 2 --------------------------------------------------------

_LOT = 40
_M = 22  # margin for coordinates
_TILE_FILL = {"red": "#f4c7c3", "blue": "#c9daf8", "green": "#d9ead3", "black": "#b7b7b7"}
_PIECE = {"red": "#cc0000", "blue": "#1155cc", "green": "#38761d", "black": "#111111"}
_CAP = {"black": "#111111", "white": "#ffffff"}


def _lot_xy(lot: int) -> tuple[int, int]:
    column, row = lot // 10, lot % 10 + 1
    return _M + column * _LOT, _M + (N_ROWS - row) * _LOT


def _ac_defs(state: Any, prefix: str) -> str:
    """The layout: tile colours, tile numbers, icon lots, coordinates."""
    width, height = 2 * _M + N_COLUMNS * _LOT, 2 * _M + N_ROWS * _LOT
    out = [f'<g id="{prefix}board">', f'<rect width="{width}" height="{height}" fill="#fff"/>']
    for t, tile in enumerate(state.layout.tiles):
        xs, ys = zip(*(_lot_xy(lot) for lot in TILE_LOTS[t]), strict=True)
        x, y = min(xs), min(ys)
        out.append(f'<rect class="tile" x="{x}" y="{y}" width="{2 * _LOT}" height="{2 * _LOT}" '
                   f'fill="{_TILE_FILL[tile.colour]}" stroke="#333" stroke-width="2">'
                   f"<title>{escape(f'{tile.colour} tile {tile.number}')}</title></rect>")
    for lot in range(N_COLUMNS * N_ROWS):
        x, y = _lot_xy(lot)
        out.append(f'<rect x="{x}" y="{y}" width="{_LOT}" height="{_LOT}" fill="none" '
                   'stroke="#999" stroke-width="0.5"/>')
        if state.layout.is_icon[lot]:
            tile = state.layout.tiles[TILE_OF[lot]]
            out.append(f'<g class="icon" data-lot="{LOT_NAMES[lot]}">'
                       f"<title>{escape(f'{LOT_NAMES[lot]}: icon lot of the {tile.colour} {tile.number}')}"
                       "</title>"
                       + _text(x + 9, y + 9, "★", 11, "#555")
                       + _text(x + 9, y + 21, str(tile.number), 9, "#555") + "</g>")
    for column in range(N_COLUMNS):
        x = _M + column * _LOT + _LOT / 2
        out.append(_text(x, _M / 2, COLUMNS[column]) + _text(x, height - _M / 2, COLUMNS[column]))
    for row in range(1, N_ROWS + 1):
        y = _M + (N_ROWS - row) * _LOT + _LOT / 2
        out.append(_text(_M / 2, y, str(row)) + _text(width - _M / 2, y, str(row)))
    out.append("</g>")
    return "".join(out)


def _structure(lot_name: str, kind: str, colour: str, claimed_by: str | None) -> str:
    lot = LOT_NAMES.index(lot_name)
    x, y = _lot_xy(lot)
    fill = _PIECE[colour]
    about = f"{lot_name}: {colour} {kind}" + (f", claimed by {claimed_by}" if claimed_by else "")
    parts = [f'<g class="structure {kind}" data-lot="{lot_name}" data-colour="{colour}"'
             + (f' data-claimed-by="{_attr(claimed_by)}"' if claimed_by else "")
             + f"><title>{escape(about)}</title>"]
    if kind == "tower":
        parts.append(f'<path d="M{x + 13} {y + 34} V{y + 14} L{x + 20} {y + 6} L{x + 27} {y + 14} '
                     f'V{y + 34} Z" fill="{fill}" stroke="#000" stroke-width="1"/>')
        if claimed_by:
            parts.append(f'<circle class="cap" cx="{x + 20}" cy="{y + 22}" r="5" '
                         f'fill="{_CAP.get(claimed_by, "#888")}" stroke="#000" stroke-width="1.2"/>')
    else:
        parts.append(f'<path d="M{x + 8} {y + 32} A12 12 0 0 1 {x + 32} {y + 32} Z" fill="{fill}" '
                     'stroke="#000" stroke-width="1"/>')
    parts.append("</g>")
    return "".join(parts)


def _ac_board(state: Any, prefix: str, label: str) -> str:
    width, height = 2 * _M + N_COLUMNS * _LOT, 2 * _M + N_ROWS * _LOT
    out = [f'<svg {_SVG} class="board alien-city" viewBox="0 0 {width} {height}" width="{width}" '
           f'height="{height}" role="img"><title>{escape(label)}</title>',
           f'<use href="#{prefix}board"/>']
    for lot_name, s in state.structures().items():
        out.append(_structure(lot_name, s.kind, s.colour, s.claimed_by))
    out.append("</svg>")
    return "".join(out)


# --- Space Truckin': a 9 x 9 torus of square tiles ------------------------------------------------------

_CELL = 44
_H = _CELL / 2
_SM = 20
_SPACE = "#0b1a33"
_PLANET = "#e69138"
_WORMHOLE = "#b4a7d6"
_STATION = "#cfe2f3"
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


def _st_defs(prefix: str) -> str:
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


def _st_board(state: Any, prefix: str, label: str) -> str:
    size = 2 * _SM + SIZE * _CELL
    out = [f'<svg {_SVG} class="board space-truckin" viewBox="0 0 {size} {size}" width="{size}" '
           f'height="{size}" role="img"><title>{escape(label)}</title>',
           f'<rect width="{size}" height="{size}" fill="#fff"/>',
           f'<rect x="{_SM}" y="{_SM}" width="{SIZE * _CELL}" height="{SIZE * _CELL}" fill="{_SPACE}"/>']
    for i in range(SIZE):
        x = _SM + i * _CELL + _H
        out.append(_text(x, _SM / 2, COLS[i]) + _text(x, size - _SM / 2, COLS[i]))
        y = _SM + (SIZE - 1 - i) * _CELL + _H
        out.append(_text(_SM / 2, y, str(i + 1)) + _text(size - _SM / 2, y, str(i + 1)))
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
        out.append(f'<use class="tile" data-cell="{name}" data-tile="{_attr(TILES[t].id)}" '
                   f'href="#{prefix}{_symbol_key(t)}" '
                   f'transform="translate({x} {y}) rotate({90 * q} {_H:g} {_H:g})">'
                   f"<title>{escape(f'{name}: {TILES[t].id}, rotation {90 * q}')}</title></use>")
        for s, seg in enumerate(TILES[t].segments):
            seat = state.ship_at(cell, s)
            if seat is None:
                continue
            sx, sy = _ship_xy(t, q, s)
            about = f"{name}: {seat}'s ship on the {seg.describe(q)}"
            ships.append(f'<circle class="ship" data-seat="{_attr(seat)}" data-cell="{name}" '
                         f'cx="{x + sx:g}" cy="{y + sy:g}" r="5.5" fill="{_SEAT.get(seat, "#ccc")}" '
                         f'stroke="#000" stroke-width="1.5"><title>{escape(about)}</title></circle>')
    out += ships  # above every tile, so a neighbour never covers a ship
    out.append("</svg>")
    return "".join(out)


__all__ = ["board", "defs"]
