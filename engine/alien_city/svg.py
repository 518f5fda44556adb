"""The Alien City board as SVG for the archive site: 8 x 10 lots in 20 tiles of 2 x 2.

The layout (tile colours and numbers, icon lots, coordinates) never changes during a game, so it is
drawn once in the page's ``defs`` and each ply only places a reference to it and the structures. Every
structure is one ``<g class="structure ...">`` with its lot, colour and claim as data attributes, and a
``<title>`` so a hover says what it is.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from engine import svg
from engine.alien_city.board import COLUMNS, LOT_NAMES, N_COLUMNS, N_ROWS, TILE_LOTS, TILE_OF

if TYPE_CHECKING:
    from engine.alien_city.state import AlienCityState

_LOT = 40
_M = 22  # margin for coordinates
_TILE_FILL = {"red": "#f4c7c3", "blue": "#c9daf8", "green": "#d9ead3", "black": "#b7b7b7"}
_PIECE = {"red": "#cc0000", "blue": "#1155cc", "green": "#38761d", "black": "#111111"}
_CAP = {"black": "#111111", "white": "#ffffff"}
LAST = "#e010e0"  # the frame of the last move, the same magenta as in the mail


def _lot_xy(lot: int) -> tuple[int, int]:
    column, row = lot // 10, lot % 10 + 1
    return _M + column * _LOT, _M + (N_ROWS - row) * _LOT


def svg_defs(state: AlienCityState, prefix: str) -> str:
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
                       + svg.text(x + 9, y + 9, "★", 11, "#555")
                       + svg.text(x + 9, y + 21, str(tile.number), 9, "#555") + "</g>")
    for column in range(N_COLUMNS):
        x = _M + column * _LOT + _LOT / 2
        out.append(svg.text(x, _M / 2, COLUMNS[column]) + svg.text(x, height - _M / 2, COLUMNS[column]))
    for row in range(1, N_ROWS + 1):
        y = _M + (N_ROWS - row) * _LOT + _LOT / 2
        out.append(svg.text(_M / 2, y, str(row)) + svg.text(width - _M / 2, y, str(row)))
    out.append("</g>")
    return "".join(out)


def _tower(x: float, y: float, fill: str) -> str:
    return (f'<path d="M{x + 13:g} {y + 34:g} V{y + 14:g} L{x + 20:g} {y + 6:g} L{x + 27:g} {y + 14:g} '
            f'V{y + 34:g} Z" fill="{fill}" stroke="#000" stroke-width="1"/>')


def _dome(x: float, y: float, fill: str) -> str:
    return (f'<path d="M{x + 8:g} {y + 32:g} A12 12 0 0 1 {x + 32:g} {y + 32:g} Z" fill="{fill}" '
            'stroke="#000" stroke-width="1"/>')


def _cap(x: float, y: float, seat: str, cls: str = ' class="cap"') -> str:
    return (f'<circle{cls} cx="{x + 20:g}" cy="{y + 22:g}" r="5" fill="{_CAP.get(seat, "#888")}" '
            'stroke="#000" stroke-width="1.2"/>')


def _structure(lot_name: str, kind: str, colour: str, claimed_by: str | None) -> str:
    lot = LOT_NAMES.index(lot_name)
    x, y = _lot_xy(lot)
    fill = _PIECE[colour]
    about = f"{lot_name}: {colour} {kind}" + (f", claimed by {claimed_by}" if claimed_by else "")
    parts = [f'<g class="structure {kind}" data-lot="{lot_name}" data-colour="{colour}"'
             + (f' data-claimed-by="{svg.attr(claimed_by)}"' if claimed_by else "")
             + f"><title>{escape(about)}</title>"]
    if kind == "tower":
        parts.append(_tower(x, y, fill))
        if claimed_by:
            parts.append(_cap(x, y, claimed_by))
    else:
        parts.append(_dome(x, y, fill))
    parts.append("</g>")
    return "".join(parts)


def _last_move(state: AlienCityState) -> str:
    """A frame on the lot of the last build (class ``last-move``) and a dashed one on the tower
    it claimed, if that is another lot (class ``last-claim``)."""
    built, claim = state.last_move_lots()
    out = []
    for name, cls, dash in ((built, "last-move", ""), (claim if claim != built else None, "last-claim",
                                                        ' stroke-dasharray="5 3"')):
        if name is None:
            continue
        x, y = _lot_xy(LOT_NAMES.index(name))
        out.append(f'<rect class="{cls}" data-lot="{name}" x="{x + 2}" y="{y + 2}" width="{_LOT - 4}" '
                   f'height="{_LOT - 4}" fill="none" stroke="{LAST}" stroke-width="3"{dash}/>')
    return "".join(out)


def svg_legend(state: AlienCityState, prefix: str) -> str:
    """What the symbols of the board mean, each drawn as on the board."""

    def item(drawing: str, meaning: str) -> str:
        return (f'<li><svg {svg.XMLNS} width="30" height="30" viewBox="0 0 40 40" aria-hidden="true">'
                f"{drawing}</svg> {escape(meaning)}</li>")

    tiles = "".join(f'<rect x="{4 + 9 * i}" y="8" width="8" height="24" fill="{_TILE_FILL[c]}" '
                    'stroke="#333"/>' for i, c in enumerate(("red", "blue", "green", "black")))
    frame = (f'<rect x="4" y="4" width="32" height="32" fill="#eee" stroke="{LAST}" '
             'stroke-width="3"/>')
    return "".join([
        '<ul class="legend">',
        item(tiles, "tiles of the red, blue, green and black guilds (2 x 2 lots)"),
        item(_tower(0, 0, _PIECE["red"]), "tower, in its colour"),
        item(_dome(0, 0, _PIECE["blue"]), "dome, in its colour"),
        item(_tower(0, 0, _PIECE["green"]) + _cap(0, 0, "black", ""), "tower claimed by black (a black cap)"),
        item(_tower(0, 0, _PIECE["green"]) + _cap(0, 0, "white", ""), "tower claimed by white (a white cap)"),
        item(svg.text(14, 12, "★", 16, "#555") + svg.text(14, 28, "3", 12, "#555"),
             "icon lot, with its tile's number"),
        item(frame, "the last move: the lot built on (dashed: the tower it claimed)"),
        "</ul>",
    ])


def svg_board(state: AlienCityState, prefix: str, label: str) -> str:
    width, height = 2 * _M + N_COLUMNS * _LOT, 2 * _M + N_ROWS * _LOT
    out = [f'<svg {svg.XMLNS} class="board alien-city" viewBox="0 0 {width} {height}" width="{width}" '
           f'height="{height}" role="img"><title>{escape(label)}</title>',
           f'<use href="#{prefix}board"/>']
    for lot_name, s in state.structures().items():
        out.append(_structure(lot_name, s.kind, s.colour, s.claimed_by))
    out.append(_last_move(state))
    out.append("</svg>")
    return "".join(out)


__all__ = ["svg_board", "svg_defs", "svg_legend"]
