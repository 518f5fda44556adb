"""The 9 x 9 torus: cell numbers, names and neighbours, computed once.

Cells are ``row * 9 + col`` with column A = 0 (west) and row 1 = 0 (south), so north is ``row + 1``.
The seams are where a step wraps (I to A, 9 to 1); the edge bonus needs to know which steps do.
"""

from __future__ import annotations

SIZE = 9
CELLS = SIZE * SIZE
COLS = "ABCDEFGHI"

# (dcol, drow) per direction N E S W
_STEP = ((0, 1), (1, 0), (0, -1), (-1, 0))


def cell_of(col: int, row: int) -> int:
    return (row % SIZE) * SIZE + (col % SIZE)


def cell_name(cell: int) -> str:
    return f"{COLS[cell % SIZE]}{cell // SIZE + 1}"


def parse_cell(text: str) -> int | None:
    text = text.strip().upper()
    if len(text) != 2 or text[0] not in COLS or text[1] not in "123456789":
        return None
    return cell_of(COLS.index(text[0]), int(text[1]) - 1)


def _neighbours(cell: int) -> tuple[int, int, int, int]:
    col, row = cell % SIZE, cell // SIZE
    return tuple(cell_of(col + dc, row + dr) for dc, dr in _STEP)  # type: ignore[return-value]


def _crosses(cell: int, d: int) -> bool:
    col, row = cell % SIZE, cell // SIZE
    dc, dr = _STEP[d]
    return not (0 <= col + dc < SIZE and 0 <= row + dr < SIZE)


NEIGHBOURS: tuple[tuple[int, int, int, int], ...] = tuple(_neighbours(c) for c in range(CELLS))
SEAM: tuple[tuple[bool, bool, bool, bool], ...] = tuple(
    tuple(_crosses(c, d) for d in range(4)) for c in range(CELLS))  # type: ignore[misc]


def _ring(cell: int) -> tuple[tuple[int, bool], ...]:
    col, row = cell % SIZE, cell // SIZE
    out = []
    for dr in (1, 0, -1):
        for dc in (-1, 0, 1):
            if dc == 0 and dr == 0:
                continue
            across = not (0 <= col + dc < SIZE and 0 <= row + dr < SIZE)
            out.append((cell_of(col + dc, row + dr), across))
    return tuple(out)


# The eight cells around a station, each with whether reaching it crosses a seam.
RING: tuple[tuple[tuple[int, bool], ...], ...] = tuple(_ring(c) for c in range(CELLS))
# Canonical cell order for listings: A1, A2, ... I9 (the order of the names as strings).
CELL_ORDER: tuple[int, ...] = tuple(sorted(range(CELLS), key=cell_name))
