"""Where each piece may be built (rules 1-5 of "Legal builds"), independent of whose turn it is.

The street and icon rules do not depend on the piece, and the colour rules depend only on the tile, so
one :class:`Allowance` per position serves both seats: a seat's legal builds are the allowed lots of
the pieces it still holds.

Two ways to ask, one set of rules: :func:`allowance` answers for every lot at once (listings, move
checks); :class:`BuildProbe` answers for one lot at a time (random playouts, which need one legal
build, not all of them). Both take the colour rules (4 and 5) from :func:`colour_lots` and the icon
rule from :func:`icon_deferred`; the street rule (2) is one predicate computed two ways in
``streets``, and a property test holds the two answers equal.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from engine.alien_city.board import (
    BLACK,
    DOME_PIECES,
    IS_TOWER,
    N_LOTS,
    N_PIECES,
    N_TILES,
    PIECE_COLOUR,
    TILE_LOTS,
    TILE_OF,
    TOWER_PIECES,
    Layout,
)
from engine.alien_city.streets import (
    ALL_LOTS,
    BIT,
    StreetInfo,
    analyse,
    empty_bits,
    lots_of,
    street_ok_at,
)

TILE_BITS: tuple[int, ...] = tuple(sum(BIT[i] for i in TILE_LOTS[t]) for t in range(N_TILES))


@dataclass(frozen=True, slots=True)
class Allowance:
    streets: StreetInfo
    # Allowed lots per piece index (ascending): rules 1-5 for that piece.
    piece_lots: tuple[tuple[int, ...], ...]
    # Per colour index: whether that colour's domes use the fallback (no buildable lot of their colour).
    dome_fallback: tuple[bool, ...]


def crowded_lots(tile_count: Sequence[int]) -> int:
    """Lots of the tiles holding two or more structures, as a bitboard (rule 4 lets any tower go
    there)."""
    bits = 0
    for t in range(N_TILES):
        if tile_count[t] >= 2:
            bits |= TILE_BITS[t]
    return bits


def colour_lots(piece: int, layout: Layout, crowded: int, fallback: bool) -> int:
    """Rules 4-5: the lots whose tile lets ``piece`` go there, as a bitboard, before the street and
    icon rules. A tower goes on its colour's tiles, on black tiles, and on any crowded tile (see
    :func:`crowded_lots`); a dome on its colour's tiles, or anywhere when ``fallback`` (no lot of its
    colour's tiles is buildable)."""
    c = PIECE_COLOUR[piece]
    if IS_TOWER[piece]:
        return layout.colour_bits[c] | layout.colour_bits[BLACK] | crowded
    return ALL_LOTS if fallback else layout.colour_bits[c]


def icon_deferred(lot: int, layout: Layout, street_ok: Callable[[int], bool]) -> bool:
    """Rule 3: an icon lot waits while another lot of its tile is street-legal."""
    return layout.is_icon[lot] and any(street_ok(m) for m in TILE_LOTS[TILE_OF[lot]] if m != lot)


def allowance(board: Sequence[int], tile_count: Sequence[int], layout: Layout) -> Allowance:
    streets = analyse(board, layout.icon_bits)
    buildable = streets.buildable
    crowded = crowded_lots(tile_count)
    buildable_bits = streets.buildable_bits
    piece_lots: list[tuple[int, ...]] = [()] * N_PIECES
    for p in TOWER_PIECES:
        piece_lots[p] = tuple(lots_of(buildable_bits & colour_lots(p, layout, crowded, False)))
    fallback = [False] * 4
    for p in DOME_PIECES:
        own = tuple(lots_of(buildable_bits & colour_lots(p, layout, crowded, False)))
        if own or not buildable:
            piece_lots[p] = own
        else:
            piece_lots[p] = buildable
            fallback[PIECE_COLOUR[p]] = True
    return Allowance(streets, tuple(piece_lots), tuple(fallback))


def can_build(allow: Allowance, supply: Sequence[int]) -> bool:
    """Whether a seat holding ``supply`` has any legal build."""
    lots = allow.piece_lots
    return any(supply[p] and lots[p] for p in range(N_PIECES))


class BuildProbe:
    """Rules 1-5 for one (piece, lot) at a time, for one position that keeps the street invariant.

    What a lot allows is worked out on first demand and remembered, so asking about a few random
    lots costs a few flood fills instead of the whole-board analysis. A new position needs a new
    probe (:meth:`after_build` derives it cheaply). The probe keeps no reference to the board, so
    copies of a position share it.
    """

    __slots__ = ("_any_street", "_crowded", "_empty", "_fallback", "_hints", "_layout", "_n_empty",
                 "_street", "_witness")

    def __init__(self, board: Sequence[int], tile_count: Sequence[int], layout: Layout):
        self._setup(layout, empty_bits(board), crowded_lots(tile_count), [-1] * 4)

    def _setup(self, layout: Layout, empty: int, crowded: int, hints: list[int]) -> None:
        self._layout = layout
        self._empty = empty
        self._n_empty = empty.bit_count()
        self._crowded = crowded
        self._street: list[bool | None] = [None] * N_LOTS
        self._fallback: list[bool | None] = [None] * 4
        self._any_street: bool | None = None
        # Per dome colour: a lot of that colour found buildable here (-1: none known) and, from
        # the position before, a lot that probably still is (checked before any search).
        self._witness = [-1] * 4
        self._hints = hints

    def after_build(self, lot: int, on_tile: int) -> BuildProbe:
        """The probe of the position after a build on ``lot``, whose tile then holds ``on_tile``
        structures."""
        new = object.__new__(BuildProbe)
        crowded = self._crowded | (TILE_BITS[TILE_OF[lot]] if on_tile >= 2 else 0)
        hints = [w if w != lot else -1 for w in self._witness]
        new._setup(self._layout, self._empty & ~BIT[lot], crowded, hints)
        return new

    @property
    def empty(self) -> int:
        return self._empty

    def street_ok(self, lot: int) -> bool:
        """Rules 1-2: the lot is empty and building on it keeps the streets whole."""
        known = self._street[lot]
        if known is None:
            known = self._street[lot] = street_ok_at(self._empty, self._n_empty, lot)
        return known

    def buildable(self, lot: int) -> bool:
        """Rules 1-3."""
        return self.street_ok(lot) and not icon_deferred(lot, self._layout, self.street_ok)

    def dome_fallback(self, colour: int) -> bool:
        """Rule 5's fallback: no lot of a ``colour`` tile is buildable, so its domes go anywhere."""
        known = self._fallback[colour]
        if known is None:
            hint = self._hints[colour]
            if hint >= 0 and self.buildable(hint):
                found = hint
            else:
                lots = self._empty & self._layout.colour_bits[colour]
                icons = self._layout.icon_bits
                # A lot that is no icon lot is buildable when it is street-legal: look there first.
                found = self._first(lots & ~icons, self.street_ok)
                if found < 0:
                    found = self._first(lots & icons, self.buildable)
            self._witness[colour] = found
            known = self._fallback[colour] = found < 0
        return known

    def lots(self, piece: int) -> int:
        """Empty lots the colour rules allow ``piece`` (a bitboard): its legal lots are those of
        them that are buildable."""
        fallback = not IS_TOWER[piece] and self.dome_fallback(PIECE_COLOUR[piece])
        return self._empty & colour_lots(piece, self._layout, self._crowded, fallback)

    def allows(self, piece: int, lot: int) -> bool:
        """Rules 1-5: whoever holds ``piece`` may build it on ``lot``."""
        return bool(self.lots(piece) >> lot & 1) and self.buildable(lot)

    def any_build(self, supply: Sequence[int]) -> bool:
        """Whether a seat holding ``supply`` has a legal build (what :func:`can_build` answers).

        A seat with a dome can build exactly when some lot is street-legal: then some lot is
        buildable (rule 3 only defers an icon lot to its tile's other lots), and a dome goes on its
        colour's buildable lots or, by the fallback, on any.
        """
        if any(supply[p] for p in DOME_PIECES):
            if self._any_street is None:
                self._any_street = self._first(self._empty, self.street_ok) >= 0
            return self._any_street
        return any(supply[p] and self._first(self.lots(p), self.buildable) >= 0 for p in TOWER_PIECES)

    def sample(self, supply: Sequence[int], rng: random.Random, tries: int = 64) -> tuple[int, int] | None:
        """A uniformly random legal (piece, lot) for a seat holding ``supply``, every legal build
        equally likely; None if none was found in ``tries`` draws (then ask the full listing).

        Draws uniformly from the lots the colour rules allow the held pieces and rejects those the
        street and icon rules forbid, so few draws are wasted.
        """
        pieces: list[int] = []
        masks: list[int] = []
        counts: list[int] = []
        total = 0
        for p in range(N_PIECES):
            if supply[p]:
                bits = self.lots(p)
                n = bits.bit_count()
                if n:
                    pieces.append(p)
                    masks.append(bits)
                    counts.append(n)
                    total += n
        if not total:
            return None
        random_ = rng.random
        last = len(counts) - 1
        for _ in range(tries):
            r = random_() * total
            k = 0
            while k < last and r >= counts[k]:
                r -= counts[k]
                k += 1
            lot = _nth_bit(masks[k], min(int(r), counts[k] - 1))
            if self.buildable(lot):
                return pieces[k], lot
        return None

    @staticmethod
    def _first(bits: int, test: Callable[[int], bool]) -> int:
        """The lowest lot of the bitboard ``bits`` for which ``test`` holds, or -1."""
        while bits:
            low = bits & -bits
            lot = low.bit_length() - 1
            if test(lot):
                return lot
            bits ^= low
        return -1


def _nth_bit(bits: int, n: int) -> int:
    """Index of the ``n``-th (from 0) set bit of ``bits``: halves by population count, so it costs
    a few steps instead of ``n``."""
    base = 0
    width = N_LOTS
    while width > 8:
        half = width >> 1
        low = bits & ((1 << half) - 1)
        below = low.bit_count()
        if n < below:
            bits = low
        else:
            n -= below
            bits >>= half
            base += half
        width -= half
    for _ in range(n):
        bits &= bits - 1
    return base + (bits & -bits).bit_length() - 1
