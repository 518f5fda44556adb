"""The Alien City board for the HTML part of a mail: a table of 8 x 10 lots in 20 tiles.

Mail clients keep inline attributes but not style sheets, and every mail of a game carries the
board, so the table is written to be small (a game's mails must fit in a few hundred kilobytes):
whatever is the same for every lot (font, size, borders) is said once on the table, its column
groups and row groups; a lot carries only its tile's colour and what stands on it. The thick
lines between tiles are the borders of the column groups and row groups (two columns, two rows).
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from engine.alien_city.board import COLUMNS, LOT_NAMES, N_ROWS, TILE_OF, lot_index

if TYPE_CHECKING:
    from engine.alien_city.state import AlienCityState

TILE_BG = {"red": "#ecc", "blue": "#cdf", "green": "#dec", "black": "#bbb"}
PIECE_FG = {"red": "#c00", "blue": "#15c", "green": "#373", "black": "#000"}
GLYPH = {"tower": "▲", "dome": "●"}
LAST = "#f0f"  # the frame of the last build
_THICK = "3px solid #333"
_TABLE = (f'<table border=1 cellspacing=0 cellpadding=0 style="border-collapse:collapse;'
          f'border:{_THICK};font:16px/34px sans-serif;text-align:center">')
_COLUMNS = ('<colgroup><col width="24"/></colgroup>'
            + f'<colgroup span=2 width=38 style="border:{_THICK}"></colgroup>' * 4 + "<colgroup></colgroup>")
_HEAD = "<tr><th></th>" + "".join(f"<th>{c}</th>" for c in COLUMNS) + "<th></th></tr>"

LEGEND = ("<p>▲ tower, ● dome, in its colour; ★3 icon lot of a tile numbered 3; "
          f"<sup>B</sup>/<sup>W</sup> claimed by black/white; <font color={LAST}>magenta</font> "
          "frame: the last build.</p>")


def board_html(state: AlienCityState) -> str:
    structures = state.structures()
    built, _claim = state.last_move_lots()
    out = [_TABLE, _COLUMNS, f"<thead>{_HEAD}</thead>"]
    for row in range(N_ROWS, 0, -1):
        if row % 2 == 0:
            out.append(f'<tbody style="border:{_THICK}">')
        cells = [f"<tr><th>{row}</th>"]
        for column in range(8):
            lot = lot_index(column, row)
            name = LOT_NAMES[lot]
            tile = state.layout.tiles[TILE_OF[lot]]
            frame = f' style="border:4px solid {LAST}"' if name == built else ""
            body = f"★{tile.number}" if state.layout.is_icon[lot] else ""
            s = structures.get(name)
            if s is not None:
                body += f"<font color={PIECE_FG[s.colour]}>{GLYPH[s.kind]}</font>"
                if s.claimed_by:
                    body += f"<sup>{escape(s.claimed_by[0].upper())}</sup>"
            cells.append(f"<td bgcolor={TILE_BG[tile.colour]}{frame}>{body}</td>")
        cells.append(f"<th>{row}</th></tr>")
        out.append("".join(cells))
        if row % 2 == 1:
            out.append("</tbody>")
    out.append(f"<tfoot>{_HEAD}</tfoot></table>")
    return "".join(out)


__all__ = ["LEGEND", "board_html"]
