"""Coordinates, tiles and pieces of the Alien City board, as flat tables.

Everything that depends only on the geometry (neighbours, the ring of eight cells around a lot, which
tile a lot belongs to) is computed once at import, so the hot paths (street analysis, legal builds)
only index into tuples.

Lots are numbered column-major, ``index = 10 * column + (row - 1)``, so sorting indices gives the
canonical listing order A1, A2, ... A10, B1, ... H10.
"""

from __future__ import annotations

from dataclasses import dataclass

COLUMNS = "ABCDEFGH"
N_COLUMNS = 8
N_ROWS = 10
N_LOTS = N_COLUMNS * N_ROWS
N_TILES = 20

SEATS: tuple[str, str] = ("black", "white")
COLOURS: tuple[str, ...] = ("red", "blue", "green", "black")
TOWER_COLOURS: tuple[str, ...] = ("red", "blue", "green")
COLOUR_INDEX = {c: i for i, c in enumerate(COLOURS)}
RED, BLUE, GREEN, BLACK = range(4)
CORNERS: tuple[str, ...] = ("SW", "SE", "NW", "NE")
OPPOSITE_CORNER = {"SW": "NE", "NE": "SW", "SE": "NW", "NW": "SE"}

EDITIONS: tuple[str, ...] = ("2.2", "1.2")
TILE_NUMBERS = {"2.2": (1, 2, 3, 4, 5), "1.2": (0, 1, 2, 4, 5)}

# Pieces: a piece index p names (kind, colour). Board cells hold 0 (empty) or p + 1.
PIECES: tuple[tuple[str, str], ...] = (
    ("tower", "red"), ("tower", "blue"), ("tower", "green"),
    ("dome", "red"), ("dome", "blue"), ("dome", "green"), ("dome", "black"),
)
PIECE_INDEX = {piece: i for i, piece in enumerate(PIECES)}
N_PIECES = len(PIECES)
TOWER_PIECES = (0, 1, 2)
DOME_PIECES = (3, 4, 5, 6)
PIECE_COLOUR = tuple(COLOUR_INDEX[c] for _, c in PIECES)
IS_TOWER = tuple(k == "tower" for k, _ in PIECES)

# Printed supplies (edition 2.2 and 1.2 agree): towers red, blue, green then domes red, blue, green, black.
START_SUPPLY: dict[str, tuple[int, ...]] = {
    "black": (2, 3, 2, 3, 3, 3, 3),
    "white": (3, 2, 2, 3, 3, 3, 3),
}
START_CAPS = 3


def lot_index(column: int, row: int) -> int:
    """Index of the lot in ``column`` (0 = A) and ``row`` (1 = south edge)."""
    return 10 * column + row - 1


LOT_NAMES: tuple[str, ...] = tuple(f"{COLUMNS[i // 10]}{i % 10 + 1}" for i in range(N_LOTS))
LOT_INDEX: dict[str, int] = {name: i for i, name in enumerate(LOT_NAMES)}
LOT_COLUMN: tuple[int, ...] = tuple(i // 10 for i in range(N_LOTS))
LOT_ROW: tuple[int, ...] = tuple(i % 10 + 1 for i in range(N_LOTS))
TILE_OF: tuple[int, ...] = tuple(4 * ((i % 10) // 2) + (i // 10) // 2 for i in range(N_LOTS))


def _corner_lot(tile: int, corner: str) -> int:
    tx, ty = tile % 4, tile // 4
    column = 2 * tx + (1 if corner in ("SE", "NE") else 0)
    row = 2 * ty + (2 if corner in ("NW", "NE") else 1)
    return lot_index(column, row)


CORNER_LOT: tuple[dict[str, int], ...] = tuple(
    {corner: _corner_lot(t, corner) for corner in CORNERS} for t in range(N_TILES))
TILE_LOTS: tuple[tuple[int, ...], ...] = tuple(
    tuple(sorted(CORNER_LOT[t].values())) for t in range(N_TILES))


def _neighbours(i: int) -> tuple[int, ...]:
    column, row = LOT_COLUMN[i], LOT_ROW[i]
    out = []
    for dc, dr in ((0, 1), (1, 0), (0, -1), (-1, 0)):
        c, r = column + dc, row + dr
        if 0 <= c < N_COLUMNS and 1 <= r <= N_ROWS:
            out.append(lot_index(c, r))
    return tuple(out)


NEIGHBOURS: tuple[tuple[int, ...], ...] = tuple(_neighbours(i) for i in range(N_LOTS))

# The eight cells around a lot in cyclic order N, NE, E, SE, S, SW, W, NW (-1 off the board):
# consecutive ring cells are 4-adjacent, which makes "are my street neighbours connected around me"
# a question about runs in this cycle.
_RING_STEPS = ((0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1))


def _ring(i: int) -> tuple[int, ...]:
    column, row = LOT_COLUMN[i], LOT_ROW[i]
    out = []
    for dc, dr in _RING_STEPS:
        c, r = column + dc, row + dr
        out.append(lot_index(c, r) if 0 <= c < N_COLUMNS and 1 <= r <= N_ROWS else -1)
    return tuple(out)


RING: tuple[tuple[int, ...], ...] = tuple(_ring(i) for i in range(N_LOTS))


def tile_span(tile: int) -> str:
    """The tile's lots as a range, e.g. ``C3-D4``: how players find a tile on the printed board."""
    lots = TILE_LOTS[tile]
    return f"{LOT_NAMES[lots[0]]}-{LOT_NAMES[lots[-1]]}"


def grid_distance(a: int, b: int) -> int:
    """Manhattan distance between lots, used to rank suggestions by nearness."""
    return abs(LOT_COLUMN[a] - LOT_COLUMN[b]) + abs(LOT_ROW[a] - LOT_ROW[b])


@dataclass(frozen=True)
class Tile:
    colour: str
    number: int
    icon: str

    def to_json(self) -> dict[str, object]:
        return {"color": self.colour, "number": self.number, "icon": self.icon}


@dataclass(frozen=True)
class Layout:
    """The 20 tiles of one setup, with per-lot lookups precomputed for the rules."""

    tiles: tuple[Tile, ...]
    lot_colour: tuple[int, ...]
    is_icon: tuple[bool, ...]
    icon_lot: tuple[int, ...]
    # Per colour index, the lots of that colour's tiles as a bitboard (bit i = lot i).
    colour_bits: tuple[int, ...] = ()
    icon_bits: int = 0

    @classmethod
    def from_tiles(cls, tiles: tuple[Tile, ...]) -> Layout:
        icon_lot = tuple(CORNER_LOT[t][tile.icon] for t, tile in enumerate(tiles))
        icons = set(icon_lot)
        return cls(
            tiles=tiles,
            lot_colour=tuple(COLOUR_INDEX[tiles[TILE_OF[i]].colour] for i in range(N_LOTS)),
            is_icon=tuple(i in icons for i in range(N_LOTS)),
            icon_lot=icon_lot,
            colour_bits=tuple(sum(1 << i for i in range(N_LOTS) if tiles[TILE_OF[i]].colour == c)
                              for c in COLOURS),
            icon_bits=sum(1 << i for i in icons),
        )

    def tile_name(self, tile: int) -> str:
        """E.g. ``the red 3 tile (C3-D4)``."""
        t = self.tiles[tile]
        return f"the {t.colour} {t.number} tile ({tile_span(tile)})"
