"""The move object and the interned table of claim-less builds.

Build moves are created once per (piece, lot) at import: legal-move listings then only index a table,
which keeps random self-play and the legal-move listing cheap.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.alien_city.board import LOT_INDEX, LOT_NAMES, N_LOTS, PIECE_INDEX, PIECES


@dataclass(frozen=True, slots=True)
class Move:
    """Build a ``kind`` ("tower"/"dome") of ``colour`` on ``lot`` (e.g. "C4"), then maybe cap the
    tower on ``claim``. Lots are upper-case names so moves read naturally in logs and tests."""

    kind: str
    colour: str
    lot: str
    claim: str | None = None

    @property
    def piece(self) -> int:
        """Index into ``board.PIECES``; KeyError for a kind/colour pair that does not exist."""
        return PIECE_INDEX[(self.kind, self.colour)]

    @property
    def lot_index(self) -> int:
        return LOT_INDEX[self.lot]

    @property
    def build(self) -> Move:
        """The same move without its claim (the form ``legal_moves`` lists)."""
        return self if self.claim is None else BUILD_MOVES[self.piece][self.lot_index]

    def with_claim(self, lot: str | None) -> Move:
        return Move(self.kind, self.colour, self.lot, lot)

    def __str__(self) -> str:
        return format_move(self)


def format_move(move: Move) -> str:
    """Canonical text: ``tower red C4``, ``tower blue E7 claim C4``."""
    text = f"{move.kind} {move.colour} {move.lot}"
    if move.claim is not None:
        text += f" claim {move.claim}"
    return text


BUILD_MOVES: tuple[tuple[Move, ...], ...] = tuple(
    tuple(Move(kind, colour, LOT_NAMES[lot]) for lot in range(N_LOTS)) for kind, colour in PIECES)
# Their canonical texts (``format_move``), by piece and lot: what the one-tap links of a listing carry.
BUILD_TEXTS: tuple[tuple[str, ...], ...] = tuple(tuple(format_move(m) for m in row) for row in BUILD_MOVES)
