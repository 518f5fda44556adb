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
_STANDS = (("",) * 3, *(tuple(piece + cap for cap in _CAP_HTML) for piece in _PIECE_HTML[1:]))
_FRAME = f' style="border:4px solid {LAST}"'
# Lot indices of each table row, west to east, north first.
_ROW_LOTS = tuple((row, tuple(lot_index(column, row) for column in range(8))) for row in range(N_ROWS, 0, -1))


# The lots in the order the table shows them (rows north first, each west to east).
_TABLE_ORDER = tuple(lot for _row, lots in _ROW_LOTS for lot in lots)
_TABLE_PLACE = {lot: place for place, lot in enumerate(_TABLE_ORDER)}


def _board_parts(state: AlienCityState) -> tuple[list[str], dict[int, str]]:
    """The table as a list of parts, in which every odd part is left empty for what stands on a lot
    (``_TABLE_ORDER``), and, by lot, the part before it with the frame of the last build: the tiles'
    colours and icon numbers change with no move, so they are written once per game."""
    layout = state.layout
    tiles, icon = layout.tiles, layout.is_icon
    parts = [_TABLE + _COLUMNS + f"<thead>{_HEAD}</thead>"]
    framed = {}
    for row, lots in _ROW_LOTS:
        if row % 2 == 0:
            parts[-1] += f'<tbody style="border:{_THICK}">'
        parts[-1] += f"<tr><th>{row}</th>"
        for lot in lots:
            tile = tiles[TILE_OF[lot]]
            number = f"★{tile.number}" if icon[lot] else ""
            framed[lot] = f"{parts[-1]}<td bgcolor={TILE_BG[tile.colour]}{_FRAME}>{number}"
            parts[-1] += f"<td bgcolor={TILE_BG[tile.colour]}>{number}"
            parts += ["", "</td>"]
        parts[-1] += f"<th>{row}</th></tr>"
        if row % 2 == 1:
            parts[-1] += "</tbody>"
    parts[-1] += f"<tfoot>{_HEAD}</tfoot></table>"
    return parts, framed


def board_html(state: AlienCityState) -> str:
    """The board as a table; the lot of the last build framed. What stands on the lots is put into
    the game's table (``_board_parts``), which a move's mail does not draw again."""
    board, cap = state.cells()
    template, framed = state.setup_drawing(("html board",), lambda: _board_parts(state))
    parts = template[:]
    parts[1::2] = [_STANDS[board[lot]][cap[lot]] for lot in _TABLE_ORDER]
    built, _claim = state.last_move_lots()
    if built is not None:
        lot = LOT_INDEX[built]
        parts[2 * _TABLE_PLACE[lot]] = framed[lot]
    return "".join(parts)


__all__ = ["board_html", "html_legend"]
