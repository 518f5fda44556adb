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

from engine.alien_city.board import COLUMNS, LOT_INDEX, N_ROWS, PIECES, SEATS, TILE_OF, lot_index
from engine.i18n import _

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



def html_legend() -> str:
    """What the table's symbols mean, in the reader's language (escaped, then the markup put in)."""
    text = escape(_("▲ tower, ● dome, in its colour; ★3 icon lot of a tile numbered 3; "
                    "{B}/{W} claimed by black/white; {magenta} frame: the last build."))
    magenta = escape(_("magenta"))
    return "<p>" + text.format(B="<sup>B</sup>", W="<sup>W</sup>",
                               magenta=f"<font color={LAST}>{magenta}</font>") + "</p>"


# What stands on a lot, by board cell and cap cell (0 = nothing; see ``AlienCityState.cells``).
_PIECE_HTML = ("", *(f"<font color={PIECE_FG[colour]}>{GLYPH[kind]}</font>" for kind, colour in PIECES))
_CAP_HTML = ("", *(f"<sup>{escape(seat[0].upper())}</sup>" for seat in SEATS))
# Lot indices of each table row, west to east, north first.
_ROW_LOTS = tuple((row, tuple(lot_index(column, row) for column in range(8))) for row in range(N_ROWS, 0, -1))


def board_html(state: AlienCityState) -> str:
    board, cap = state.cells()
    layout = state.layout
    tiles, icon = layout.tiles, layout.is_icon
    built, _claim = state.last_move_lots()
    built_lot = LOT_INDEX.get(built, -1) if built is not None else -1
    out = [_TABLE, _COLUMNS, f"<thead>{_HEAD}</thead>"]
    for row, lots in _ROW_LOTS:
        if row % 2 == 0:
            out.append(f'<tbody style="border:{_THICK}">')
        cells = [f"<tr><th>{row}</th>"]
        for lot in lots:
            tile = tiles[TILE_OF[lot]]
            frame = f' style="border:4px solid {LAST}"' if lot == built_lot else ""
            body = f"★{tile.number}" if icon[lot] else ""
            if board[lot]:
                body += _PIECE_HTML[board[lot]] + _CAP_HTML[cap[lot]]
            cells.append(f"<td bgcolor={TILE_BG[tile.colour]}{frame}>{body}</td>")
        cells.append(f"<th>{row}</th></tr>")
        out.append("".join(cells))
        if row % 2 == 1:
            out.append("</tbody>")
    out.append(f"<tfoot>{_HEAD}</tfoot></table>")
    return "".join(out)


__all__ = ["board_html", "html_legend"]
