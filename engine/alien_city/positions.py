"""Hand-built positions from compact text, for tests, puzzles and documentation examples.

Tiles are written as five lines of four tiles, north row first (the way the board is printed), each
tile as colour letter + number + icon corner, e.g. ``r1ne`` = red tile 1 with its icon in the north-east
lot. Structures are written either as ``LOT:CODE`` pairs (``"C4:TR D5:TRb A1:DK"``) or as a diagram of
ten lines of eight cells, row 10 first (``.`` = empty). A code is T (tower) or D (dome), a colour letter
R, B, G or K (black), and optionally the claiming seat b or w.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.alien_city.board import (
    LOT_INDEX,
    LOT_NAMES,
    N_LOTS,
    NEIGHBOURS,
    PIECE_INDEX,
    PIECES,
    SEATS,
    START_CAPS,
    START_SUPPLY,
    lot_index,
)
from engine.alien_city.game import AlienCity
from engine.alien_city.state import AlienCityState
from engine.alien_city.streets import analyse
from engine.base import SetupError

# A fixed 2.2 layout (north row first) with icons in every corner, used by the tests.
DEFAULT_TILES = """
g4ne k2sw r5nw b3se
b1sw r3ne k5se g2nw
k1nw g5sw b4ne r2se
r4se b5nw g1ne k3sw
r1sw b2ne g3se k4nw
"""

# The same layout with edition 1.2's numbers (3 -> 0).
DEFAULT_TILES_1_2 = DEFAULT_TILES.replace("3", "0")

_COLOUR_LETTER = {"r": "red", "b": "blue", "g": "green", "k": "black"}


def tiles_from_text(text: str) -> list[dict[str, Any]]:
    """Tiles in setup order (tile 0 = south-west first) from five lines written north row first."""
    rows = [line.split() for line in text.strip().splitlines() if line.strip()]
    if len(rows) != 5 or any(len(r) != 4 for r in rows):
        raise SetupError("tiles text must be 5 lines of 4 tiles, north row first")
    tiles = []
    for row in reversed(rows):
        for code in row:
            code = code.lower()
            if len(code) < 4 or code[0] not in _COLOUR_LETTER or not code[1:-2].isdigit():
                raise SetupError(f"bad tile {code!r}: write colour letter, number, icon corner "
                                 f"(e.g. r1ne)")
            tiles.append({"color": _COLOUR_LETTER[code[0]], "number": int(code[1:-2]),
                          "icon": code[-2:].upper()})
    return tiles


def setup_from_text(text: str = DEFAULT_TILES, first: str = "black") -> dict[str, Any]:
    return {"tiles": tiles_from_text(text), "first": first}


def _piece(code: str) -> tuple[int, int]:
    """``TRb`` -> (piece index, 1 + index of the claiming seat, or 0)."""
    c = code.strip()
    kinds = {"t": "tower", "d": "dome"}
    if len(c) not in (2, 3) or c[0].lower() not in kinds or c[1].lower() not in _COLOUR_LETTER:
        raise SetupError(f"bad structure code {code!r}: e.g. TR, TRb, DK")
    piece = PIECE_INDEX.get((kinds[c[0].lower()], _COLOUR_LETTER[c[1].lower()]))
    if piece is None:
        raise SetupError(f"bad structure code {code!r}: there are no black towers")
    capped = 0
    if len(c) == 3:
        if c[2].lower() not in "bw":
            raise SetupError(f"bad structure code {code!r}: the cap is b or w")
        capped = 1 if c[2].lower() == "b" else 2
        if not PIECES[piece][0] == "tower":
            raise SetupError(f"bad structure code {code!r}: only towers are claimed")
    return piece, capped


def parse_structures(text: str | Mapping[str, str]) -> dict[int, tuple[int, int]]:
    """Lot index -> (piece, cap) from pairs, a mapping, or a ten-line diagram."""
    if isinstance(text, Mapping):
        return {LOT_INDEX[lot.upper()]: _piece(code) for lot, code in text.items()}
    lines = [line.split() for line in text.strip().splitlines() if line.strip()]
    if len(lines) == 10 and all(len(line) == 8 for line in lines):
        out = {}
        for r, cells in enumerate(lines):
            for column, cell in enumerate(cells):
                if cell != ".":
                    out[lot_index(column, 10 - r)] = _piece(cell)
        return out
    out = {}
    for pair in text.split():
        lot, sep, code = pair.replace("=", ":").partition(":")
        if not sep or lot.upper() not in LOT_INDEX:
            raise SetupError(f"bad structure {pair!r}: write LOT:CODE, e.g. C4:TR")
        out[LOT_INDEX[lot.upper()]] = _piece(code)
    return out


def position(structures: str | Mapping[str, str] = "", *, tiles: str | None = None,
             options: Mapping[str, Any] | None = None, to_move: str | None = "black",
             supply: Mapping[str, Mapping[str, int]] | None = None,
             caps: Mapping[str, int] | None = None, check: bool = True) -> AlienCityState:
    """A state with exactly these structures on the board.

    Supplies: a seat given in ``supply`` holds exactly what is listed (keys ``"tower red"`` ...);
    otherwise it holds the printed supply minus the structures on the board, each taken from the seat
    holding more of that piece (black on a tie). Caps: ``caps`` or the starting caps minus the towers
    the seat has claimed. ``check`` insists on the street invariant every legal game keeps.
    """
    game = AlienCity()
    opts = game.normalize_options(options)
    if tiles is None:
        tiles = DEFAULT_TILES_1_2 if opts["edition"] == "1.2" else DEFAULT_TILES
    state = game.start(opts, setup_from_text(tiles))
    pieces = parse_structures(structures)
    held = {seat: list(START_SUPPLY[seat]) for seat in SEATS}
    for piece, _ in pieces.values():
        seat = max(SEATS, key=lambda s: (held[s][piece], s == SEATS[0]))
        if held[seat][piece] == 0:
            raise SetupError(f"more {' '.join(reversed(PIECES[piece]))}s on the board than exist")
        held[seat][piece] -= 1
    for seat, listing in (supply or {}).items():
        counts = [0] * len(PIECES)
        for name, n in listing.items():
            counts[PIECE_INDEX[tuple(name.split())]] = n  # type: ignore[index]
        held[seat] = counts
    cap_count = dict(caps) if caps else {
        seat: START_CAPS + opts["handicap"][seat]["extra_claims"]
        - sum(1 for _, c in pieces.values() if c == i + 1) for i, seat in enumerate(SEATS)}
    if check:
        board = [0] * N_LOTS
        for lot, (piece, _) in pieces.items():
            board[lot] = piece + 1
        streets = analyse(board, state.layout.icon_bits)
        if not streets.connected or streets.n_empty == 0:
            raise SetupError("the empty lots do not form one street network")
        for lot in pieces:
            if not any(board[j] == 0 for j in NEIGHBOURS[lot]):
                raise SetupError(f"the structure on {LOT_NAMES[lot]} has no street")
    state.set_position(pieces, held, cap_count, to_move)
    return state


__all__ = ["DEFAULT_TILES", "DEFAULT_TILES_1_2", "parse_structures", "position", "setup_from_text",
           "tiles_from_text"]
