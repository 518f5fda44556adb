"""The Space Truckin' board for the HTML part of a mail: a drawn board in an HTML table.

Mail clients (Gmail among them) do not show inline SVG and drop ``<style>`` blocks, so the board
is a table of 9 x 9 cells with inline attributes only. Each tile is drawn with line-drawing
characters on a 5 x 3 grid, so wormholes run on from tile to tile across the board: lines for
wormholes, discs for planets, a square for a station, the nexus where wormholes meet; ships are
their owner's initial in the owner's colour in a corner of the tile. Everything that would repeat
per cell (font, colours, spacing) is set once on the table, and cells carry only a background, so
a full board stays under 8 KB.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from .catalogue import CORNERS, EDGES, ROTATIONS, SEG_DIRS, TILES
from .geometry import COLS, SIZE

if TYPE_CHECKING:
    from .state import SpaceTruckinState

SPACE = "#123"  # placed tiles: deep space; empty cells stay the page's light grey
WORMHOLE = "#a8e"  # the table's text colour, so wormholes need no tag of their own
PLANET = "#e93"
STATION = "#cef"
ARROW = "#fd6"
LAST = "#f0f"  # the frame of the last move's cells
SEAT_COLOURS = {"red": "#f66", "blue": "#6af", "green": "#8c6", "yellow": "#fd5", "white": "#fff"}
# Box-drawing characters for a wormhole shape, by the directions it joins (N=0, E=1, S=2, W=3).
_SHAPE = {
    (0, 2): "┃", (1, 3): "━", (0, 1): "┗", (0, 3): "┛", (1, 2): "┏", (2, 3): "┓",
    (0, 1, 2): "┣", (0, 1, 3): "┻", (1, 2, 3): "┳", (0, 2, 3): "┫", (0, 1, 2, 3): "╋",
}
# Where an edge's feature is drawn on the 5 x 3 grid (line, column), by direction N E S W.
_EDGE_AT = {0: ((0, 2),), 1: ((1, 3), (1, 4)), 2: ((2, 2),), 3: ((1, 0), (1, 1))}
# A ship sits in the corner to the left of its segment's first edge, seen from the centre:
# N -> NW, E -> NE, S -> SE, W -> SW; an engineer (no edge) in the NW corner.
_SHIP_AT = {0: (0, 0), 1: (0, 4), 2: (2, 4), 3: (2, 0), -1: (0, 0)}
# Arrows of a drawn tile (only the tile to place shows them), by corner NE SE SW NW.
_ARROW_AT = {0: ((0, 4), "◥"), 1: ((2, 4), "◢"), 2: ((2, 0), "◣"), 3: ((0, 0), "◤")}

Grid = list[list[tuple[str, str]]]  # (character, colour; "" = the table's colour)


def tile_grid(t: int, q: int, ships: dict[int, str] | None = None, arrows: bool = False) -> Grid:
    """Tile ``t`` at quarter turns ``q`` on a 5 x 3 character grid, with its ships by segment."""
    tile = TILES[t]
    grid: Grid = [[(" ", "")] * 5 for _ in range(3)]
    edges = EDGES[t][q]
    for d, kind in enumerate(edges):
        for line, col in _EDGE_AT[d]:
            if kind == "W":
                grid[line][col] = ("┃" if d in (0, 2) else "━", "")
            elif kind == "P" and col != 1 and col != 3:
                grid[line][col] = ("●", PLANET)
    dirs = SEG_DIRS[t][q]
    centre = (" ", "")
    if tile.nexus:
        arms = tuple(sorted(d for s, seg in enumerate(tile.segments) if seg.kind == "wormhole"
                            for d in dirs[s]))
        centre = (_SHAPE.get(arms, "╋"), "")
    elif any(seg.kind == "station" for seg in tile.segments):
        centre = ("■", STATION)
    else:
        for s, seg in enumerate(tile.segments):
            if seg.kind == "wormhole" and len(dirs[s]) == 2:
                centre = (_SHAPE[dirs[s]], "")
            elif seg.kind == "wormhole":  # a wormhole ending at a planet: the line reaches it
                centre = ("●", PLANET)
        if centre[0] == " " and any(seg.kind == "planet" and len(seg.edges) > 1 for seg in tile.segments):
            centre = ("●", PLANET)
    grid[1][2] = centre
    if arrows:
        for a in tile.arrows:
            (line, col), glyph = _ARROW_AT[(a + q) % 4]
            grid[line][col] = (glyph, ARROW)
    for s, seat in (ships or {}).items():
        seg = tile.segments[s]
        line, col = _SHIP_AT[dirs[s][0] if seg.kind != "station" else -1]
        grid[line][col] = (seat[0].upper(), SEAT_COLOURS.get(seat, "#fff"))
    return grid


def grid_html(grid: Grid) -> str:
    """The grid as text for a ``white-space:pre`` cell: one ``<font>`` per run of a colour (blanks
    inside a run join it), nothing after the last character of a line."""
    lines = []
    for row in grid:
        n = len("".join(ch for ch, _ in row).rstrip())
        out, i = [], 0
        while i < n:
            char, colour = row[i]
            if char == " " or not colour:
                out.append(escape(char))
                i += 1
                continue
            j = i + 1
            while j < n and (row[j][1] == colour or row[j][0] == " "):
                j += 1
            while row[j - 1][0] == " ":
                j -= 1
            out.append(f"<font color={colour}>{escape(''.join(ch for ch, _ in row[i:j]))}</font>")
            i = j
        lines.append("".join(out))
    return "\n".join(lines)


def _ships_on(state: SpaceTruckinState, cell: int, t: int) -> dict[int, str]:
    return {s: seat for s in range(len(TILES[t].segments)) if (seat := state.ship_at(cell, s))}


# Set once on the table, inherited by every cell. Cells are as wide as five characters and as
# tall as three lines, so a tile is nearly square.
_FONT = f"font:11px/1 monospace;white-space:pre;color:{WORMHOLE}"
_TABLE = (f'<table border=1 cellspacing=0 cellpadding=0 bgcolor=#e8e8e8 '
          f'style="{_FONT};border-collapse:collapse;border-color:#345">')
# Headings as wide as a tile and row labels as tall, so an empty column or row keeps its size.
_HEAD = ("<tr style=color:#444><th></th>" + "".join(f"<th>  {c}  </th>" for c in COLS)
         + "<th></th></tr>")


def board_html(state: SpaceTruckinState) -> str:
    marked = set(state.last_move_cells())
    rows = [_TABLE, _HEAD]
    for row in range(SIZE - 1, -1, -1):
        cells = [f"<tr><th>\n{row + 1}\n</th>"]
        for col in range(SIZE):
            cell = row * SIZE + col
            placed = state.tile_at(cell)
            frame = f' style="border:3px solid {LAST}"' if cell in marked else ""
            if placed is None:
                cells.append(f"<td{frame}></td>")
                continue
            t, q = placed
            ships = _ships_on(state, cell, t)
            cells.append(f"<td bgcolor={SPACE}{frame}>{grid_html(tile_grid(t, q, ships))}</td>")
        cells.append(f"<th>{row + 1}</th></tr>")
        rows.append("".join(cells))
    rows.append(_HEAD + "</table>")
    return "\n".join(rows)


def drawn_html(state: SpaceTruckinState, t: int, quadrant: int, legal: set[int]) -> str:
    """The drawn tile in its four rotations, each marked legal or why not."""
    allowed = TILES[t].arrow_rotations(quadrant)
    cells, marks = [], []
    for q in range(4):
        cells.append(f"<td bgcolor={SPACE}>{grid_html(tile_grid(t, q, arrows=True))}</td>")
        mark = "legal" if q in legal else "arrow" if q not in allowed else "no fit"
        marks.append(f"<td>{ROTATIONS[q]} {mark}</td>")
    return (f"<p>Drawn: {escape(TILES[t].id)}, clock quadrant {CORNERS[quadrant]}. Rotations "
            "(arrow: the arrow forbids it; no fit: no free cell takes it):</p>"
            f'<table cellspacing=6 cellpadding=0 style="{_FONT}"><tr>{"".join(cells)}</tr>'
            f"<tr style=color:#000>{''.join(marks)}</tr></table>")


def pool_table(state: SpaceTruckinState) -> str:
    """Points and ships of each seat: a small table, which a phone's width does not cut."""
    totals = state.score().totals
    pools = state.pools()
    rows = ['<table cellpadding=2 style="text-align:right;font-size:13px"><tr><th></th>'
            "<th>points</th><th>pool</th><th>reserve</th><th>on board</th><th>lost</th></tr>"]
    for seat in state.seats:
        p = pools[seat]
        name = seat + (" (dropped)" if seat in state.dropped_seats else "")
        rows.append(f"<tr><th align=left>{escape(name)}</th><td>{totals[seat]}</td><td>{p['pool']}</td>"
                    f"<td>{p['reserve']}</td><td>{p['on_board']}</td><td>{p['lost']}</td></tr>")
    return "".join(rows) + "</table>"


def _key(glyphs: str, colour: str) -> str:
    return f'<span style="background:{SPACE};color:{colour};font-family:monospace">{glyphs}</span>'


LEGEND = (f"<p>{_key('┃━┏', WORMHOLE)} wormhole, {_key('╋┳', WORMHOLE)} nexus, "
          f"{_key('●', PLANET)} planet, {_key('■', STATION)} station, {_key('◥', ARROW)} arrow; "
          f"{_key('R', SEAT_COLOURS['red'])} a ship (its owner's initial and colour) in the corner "
          "to the left of its segment's edge; grey: no tile; the last move is framed in "
          f"<font color={LAST}>magenta</font>.</p>")


__all__ = ["LEGEND", "board_html", "drawn_html", "grid_html", "pool_table", "tile_grid"]
