"""Where each piece may be built (rules 1-5 of "Legal builds"), independent of whose turn it is.

The street and icon rules do not depend on the piece, and the colour rules depend only on the tile, so
one :class:`Allowance` per position serves both seats: a seat's legal builds are the allowed lots of
the pieces it still holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.alien_city.board import (
    BLACK,
    DOME_PIECES,
    N_PIECES,
    PIECE_COLOUR,
    TILE_OF,
    TOWER_PIECES,
    Layout,
)
from engine.alien_city.streets import StreetInfo, analyse


@dataclass(frozen=True, slots=True)
class Allowance:
    streets: StreetInfo
    # Allowed lots per piece index (ascending): rules 1-5 for that piece.
    piece_lots: tuple[tuple[int, ...], ...]
    # Per colour index: whether that colour's domes use the fallback (no buildable lot of their colour).
    dome_fallback: tuple[bool, ...]


def allowance(board: Sequence[int], tile_count: Sequence[int], layout: Layout) -> Allowance:
    streets = analyse(board, layout.is_icon)
    buildable = streets.buildable
    colour_of = layout.lot_colour
    piece_lots: list[tuple[int, ...]] = [()] * N_PIECES
    for p in TOWER_PIECES:
        c = PIECE_COLOUR[p]
        piece_lots[p] = tuple(i for i in buildable if colour_of[i] == c or colour_of[i] == BLACK
                              or tile_count[TILE_OF[i]] >= 2)
    fallback = [False] * 4
    for p in DOME_PIECES:
        c = PIECE_COLOUR[p]
        own = tuple(i for i in buildable if colour_of[i] == c)
        if own or not buildable:
            piece_lots[p] = own
        else:
            piece_lots[p] = buildable
            fallback[c] = True
    return Allowance(streets, tuple(piece_lots), tuple(fallback))


def can_build(allow: Allowance, supply: Sequence[int]) -> bool:
    """Whether a seat holding ``supply`` has any legal build."""
    lots = allow.piece_lots
    return any(supply[p] and lots[p] for p in range(N_PIECES))
