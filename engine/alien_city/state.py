"""The Alien City position: pieces on the board, supplies, caps, whose turn, and how moves change it.

Everything derived from the board (street analysis, where each piece may go, which builds end the
game) is computed lazily once per position and dropped on ``push``; copies share it because it is
immutable.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.alien_city.board import (
    COLUMNS,
    CORNER_LOT,
    DOME_PIECES,
    IS_TOWER,
    LOT_INDEX,
    LOT_NAMES,
    N_LOTS,
    N_PIECES,
    N_TILES,
    NEIGHBOURS,
    OPPOSITE_CORNER,
    PIECE_COLOUR,
    PIECE_INDEX,
    PIECES,
    SEATS,
    START_CAPS,
    START_SUPPLY,
    TILE_LOTS,
    TILE_OF,
    Layout,
    grid_distance,
)
from engine.alien_city.moves import BUILD_MOVES, Move, format_move
from engine.alien_city.notation import Partial, Unparsed, parse, rank
from engine.alien_city.rules import Allowance, allowance, can_build
from engine.alien_city.scoring import describe_structure, score_position
from engine.alien_city.streets import street_survives
from engine.base import Game, IllegalMoveError, NotationError, Score, State


@dataclass(frozen=True)
class Structure:
    """What stands on a lot, as the renderers and the server see it."""

    kind: str
    colour: str
    claimed_by: str | None


def _or_list(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} or {items[-1]}"


def other_seat(seat: str) -> str:
    return SEATS[1] if seat == SEATS[0] else SEATS[0]


class AlienCityState(State):
    """A position, pushed forward move by move (see ``engine.base.State``).

    Public additions to the interface: :meth:`ending_moves`, :meth:`is_ending`,
    :meth:`claimable_towers`, :meth:`can_claim`, :meth:`caps_left`, :meth:`supply`,
    :meth:`structures`, :meth:`allowed_lots`, :meth:`random_move`, :meth:`snapshot`, and the read-only
    ``options``, ``layout`` and ``dice``.
    """

    def __init__(self, game: Game, options: Mapping[str, Any], layout: Layout, first: str,
                 dice: Sequence[Mapping[str, Sequence[int]]] | None = None):
        self.game = game
        self.options = dict(options)
        self.layout = layout
        self.dice = [dict(r) for r in dice] if dice else None
        self.first = first
        self._board = [0] * N_LOTS
        self._cap = [0] * N_LOTS
        self._tile_count = [0] * N_TILES
        self._supply = {seat: list(START_SUPPLY[seat]) for seat in SEATS}
        handicap = self.options["handicap"]
        self._caps = {seat: START_CAPS + handicap[seat]["extra_claims"] for seat in SEATS}
        self._to_move: str | None = first
        self._ply = 0
        self._last: str | None = None
        self._last_move: Move | None = None
        self._history: list[tuple[str, str]] = []
        self._clear_cache()
        if self.options.get("symmetric"):
            self._place_symmetric_towers()

    # --- construction helpers ---------------------------------------------------------------------
    def clear_cache(self) -> None:
        """Forget everything derived from the position (street analysis, allowed lots, ending marks).

        Never needed for correctness; benchmarks use it to time a position from cold.
        """
        self._clear_cache()

    def _clear_cache(self) -> None:
        self._allow: Allowance | None = None
        self._survive: dict[int, bool] = {}
        self._after: dict[int, Allowance] = {}
        self._ending: frozenset[Move] | None = None

    def _place_symmetric_towers(self) -> None:
        """Symmetric variant: white's red tower and black's blue tower on the number-1 tiles."""
        for seat, colour in (("white", "red"), ("black", "blue")):
            tile = next(t for t, tl in enumerate(self.layout.tiles)
                        if tl.colour == colour and tl.number == 1)
            lot = CORNER_LOT[tile][OPPOSITE_CORNER[self.layout.tiles[tile].icon]]
            piece = PIECE_INDEX[("tower", colour)]
            self._put(lot, piece)
            self._supply[seat][piece] -= 1

    def _put(self, lot: int, piece: int) -> None:
        self._board[lot] = piece + 1
        self._tile_count[TILE_OF[lot]] += 1

    def set_position(self, pieces: Mapping[int, tuple[int, int]], supply: Mapping[str, Sequence[int]],
                     caps: Mapping[str, int], to_move: str | None) -> None:
        """Replace the position wholesale (hand-built positions for tests, puzzles and tools).

        ``pieces`` maps lot index to (piece index, claiming seat index + 1 or 0). The caller is
        responsible for the street invariant; see ``engine.alien_city.positions``.
        """
        self._board = [0] * N_LOTS
        self._cap = [0] * N_LOTS
        self._tile_count = [0] * N_TILES
        for lot, (piece, capped) in pieces.items():
            self._put(lot, piece)
            self._cap[lot] = capped
        self._supply = {seat: list(supply[seat]) for seat in SEATS}
        self._caps = {seat: int(caps[seat]) for seat in SEATS}
        self._clear_cache()
        self._to_move = to_move
        if to_move is not None and not can_build(self._allowance(), self._supply[to_move]):
            other = other_seat(to_move)
            self._to_move = other if can_build(self._allowance(), self._supply[other]) else None

    # --- base.State -------------------------------------------------------------------------------
    @property
    def seats(self) -> tuple[str, ...]:
        return SEATS

    @property
    def ply(self) -> int:
        return self._ply

    @property
    def to_move(self) -> str | None:
        return self._to_move

    @property
    def is_over(self) -> bool:
        return self._to_move is None

    @property
    def last_move(self) -> str | None:
        return self._last

    def copy(self) -> AlienCityState:
        new = object.__new__(AlienCityState)
        new.__dict__.update(self.__dict__)
        new._board = self._board[:]
        new._cap = self._cap[:]
        new._tile_count = self._tile_count[:]
        new._supply = {seat: s[:] for seat, s in self._supply.items()}
        new._caps = dict(self._caps)
        new._history = self._history[:]
        new._survive = dict(self._survive)
        new._after = dict(self._after)
        return new

    def parse_move(self, text: str) -> Move:
        try:
            return parse(text)
        except Unparsed as exc:
            raise NotationError(exc.message, suggestions=self._suggest(exc.partial)) from None

    def move_text(self, move: Move) -> str:
        return format_move(move)

    def legal_moves(self) -> list[Move]:
        seat = self._to_move
        if seat is None:
            return []
        supply = self._supply[seat]
        lots = self._allowance().piece_lots
        out: list[Move] = []
        for p in range(N_PIECES):
            if supply[p]:
                table = BUILD_MOVES[p]
                out += [table[i] for i in lots[p]]
        return out

    def push(self, move: Move | str) -> list[str]:
        if isinstance(move, str):
            move = self.parse_move(move)
        if not isinstance(move, Move):
            raise NotationError(f"not an Alien City move: {move!r}")
        seat = self._to_move
        if seat is None:
            raise IllegalMoveError("the game is over: no more moves", rule="game over")
        piece, lot = self._check_build(seat, move)
        claim = self._check_claim(seat, move, piece, lot) if move.claim is not None else None

        self._put(lot, piece)
        self._supply[seat][piece] -= 1
        if claim is not None:
            self._cap[claim] = SEATS.index(seat) + 1
            self._caps[seat] -= 1
        self._ply += 1
        canonical = BUILD_MOVES[piece][lot]
        text = format_move(canonical if claim is None else canonical.with_claim(LOT_NAMES[claim]))
        self._last = f"{seat}: {text}"
        self._last_move = canonical if claim is None else canonical.with_claim(LOT_NAMES[claim])
        self._history.append((seat, text))
        self._clear_cache()

        allow = self._allowance()
        other = other_seat(seat)
        if can_build(allow, self._supply[other]):
            self._to_move = other
            return []
        if can_build(allow, self._supply[seat]):
            self._to_move = seat
            return [f"{other} has no legal build and passes; {seat} moves again."]
        self._to_move = None
        return ["Neither seat has a legal build: the game is over."]

    def score(self) -> Score:
        return score_position(self._board, self._cap, self.layout, self.options,
                              final=self.is_over)

    def replay_info(self) -> dict[str, Any]:
        return {"ending": [format_move(m) for m in self.ending_moves()]}

    # --- public additions -------------------------------------------------------------------------
    def ending_moves(self) -> list[Move]:
        """The legal builds after which neither seat could build: a claim may not go with them."""
        return [m for m in self.legal_moves() if m in self._ending_set()]

    def is_ending(self, move: Move | str) -> bool:
        """Whether this build would end the game; its claim part is ignored. Meaningful only for a
        legal build (``push`` reports what is wrong with any other)."""
        if isinstance(move, str):
            move = self.parse_move(move)
        seat = self._to_move
        if seat is None:
            return False
        return self._ends(seat, move.piece, move.lot_index)

    def claimable_towers(self) -> list[str]:
        """Lots of the unclaimed towers on the board (the tower about to be built may be claimed too)."""
        board, cap = self._board, self._cap
        return [LOT_NAMES[i] for i in range(N_LOTS)
                if board[i] and IS_TOWER[board[i] - 1] and not cap[i]]

    def can_claim(self, move: Move | str | None = None) -> bool:
        """Whether the seat to move may add a claim: to ``move`` if given, else to some legal build.

        Needs a cap left, a build that does not end the game, and an unclaimed tower (on the board or
        the one being built).
        """
        seat = self._to_move
        if seat is None or not self._caps[seat]:
            return False
        if isinstance(move, str):
            move = self.parse_move(move)
        has_target = bool(self.claimable_towers())
        if move is not None:
            return (not self._ends(seat, move.piece, move.lot_index)
                    and (has_target or move.kind == "tower"))
        ending = self._ending_set()
        return any(m not in ending and (has_target or m.kind == "tower") for m in self.legal_moves())

    def last_move_lots(self) -> tuple[str | None, str | None]:
        """(lot built on, lot claimed) by the last move, for the boards to mark; Nones before the
        first move, and for the claim of a move without one."""
        move = self._last_move
        return (None, None) if move is None else (move.lot, move.claim)

    def caps_left(self, seat: str) -> int:
        return self._caps[seat]

    def supply(self, seat: str) -> dict[str, int]:
        """Pieces a seat still holds, keyed ``"tower red"`` ... ``"dome black"``."""
        return {f"{k} {c}": n for (k, c), n in zip(PIECES, self._supply[seat], strict=True)}

    def structures(self) -> dict[str, Structure]:
        """What stands where, keyed by lot name."""
        out = {}
        for i in range(N_LOTS):
            if self._board[i]:
                kind, colour = PIECES[self._board[i] - 1]
                owner = SEATS[self._cap[i] - 1] if self._cap[i] else None
                out[LOT_NAMES[i]] = Structure(kind, colour, owner)
        return out

    def structure_at(self, lot: str) -> Structure | None:
        return self.structures().get(lot.upper())

    def allowed_lots(self, kind: str, colour: str) -> list[str]:
        """Lots where that piece could legally go now (whoever holds it)."""
        lots = self._allowance().piece_lots[PIECE_INDEX[(kind, colour)]]
        return [LOT_NAMES[i] for i in lots]

    def dome_fallback(self, colour: str) -> bool:
        """Whether domes of ``colour`` may go anywhere now (no lot of their colour is buildable)."""
        return self._allowance().dome_fallback[PIECE_COLOUR[PIECE_INDEX[("dome", colour)]]]

    def has_legal_build(self, seat: str) -> bool:
        return can_build(self._allowance(), self._supply[seat])

    def history(self) -> list[tuple[str, str]]:
        """(seat, canonical move text) of every move so far."""
        return list(self._history)

    def random_move(self, rng: random.Random, claim_chance: float = 0.5) -> Move:
        """A uniformly random legal build, with a random legal claim added with ``claim_chance``."""
        moves = self.legal_moves()
        move = moves[rng.randrange(len(moves))]
        seat = self._to_move
        assert seat is not None
        if self._caps[seat] and rng.random() < claim_chance:
            targets = self.claimable_towers()
            if move.kind == "tower":
                targets.append(move.lot)
            if targets and not self._ends(seat, move.piece, move.lot_index):
                move = move.with_claim(targets[rng.randrange(len(targets))])
        return move

    def snapshot(self) -> dict[str, Any]:
        """The whole position as JSON-able data: equal snapshots mean equal positions."""
        return {
            "structures": {lot: [s.kind, s.colour, s.claimed_by]
                           for lot, s in self.structures().items()},
            "supply": {seat: self.supply(seat) for seat in SEATS},
            "caps": dict(self._caps),
            "to_move": self._to_move,
            "ply": self._ply,
            "last_move": self._last,
            "history": [list(h) for h in self._history],
        }

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AlienCityState):
            return NotImplemented
        return (self.layout == other.layout and self.options == other.options
                and self.snapshot() == other.snapshot())

    __hash__ = None  # type: ignore[assignment]

    # --- legality -----------------------------------------------------------------------------------
    def _allowance(self) -> Allowance:
        allow = self._allow
        if allow is None:
            allow = self._allow = allowance(self._board, self._tile_count, self.layout)
        return allow

    def _total_left(self) -> int:
        return sum(self._supply[SEATS[0]]) + sum(self._supply[SEATS[1]])

    def _after_allowance(self, lot: int) -> Allowance:
        after = self._after.get(lot)
        if after is None:
            board = self._board[:]
            board[lot] = 1
            counts = self._tile_count[:]
            counts[TILE_OF[lot]] += 1
            after = self._after[lot] = allowance(board, counts, self.layout)
        return after

    def _survives(self, lot: int) -> bool:
        known = self._survive.get(lot)
        if known is None:
            if lot in self._after:
                known = bool(self._after[lot].streets.street_ok)
            else:
                known = street_survives(self._allowance().streets, self._board, lot,
                                        self.layout.is_icon)
            self._survive[lot] = known
        return known

    def _ends(self, seat: str, piece: int, lot: int) -> bool:
        """Whether building ``piece`` on ``lot`` (a legal build of ``seat``) ends the game.

        Cheap first: with pieces left and some dome left anywhere, the game goes on exactly when some
        lot stays buildable (a dome always has a lot: its colour's, or any by the fallback). Only when
        nothing but towers remain are the colour rules of the position after the build needed.
        """
        if self._total_left() == 1:
            return True
        other = other_seat(seat)
        mover = self._supply[seat]
        mover_domes = sum(mover[q] for q in DOME_PIECES) - (0 if IS_TOWER[piece] else 1)
        if mover_domes > 0 or any(self._supply[other][q] for q in DOME_PIECES):
            return not self._survives(lot)
        after = self._after_allowance(lot)
        mine = mover[:]
        mine[piece] -= 1
        return not (can_build(after, mine) or can_build(after, self._supply[other]))

    def _ending_set(self) -> frozenset[Move]:
        if self._ending is None:
            seat = self._to_move
            if seat is None:
                self._ending = frozenset()
            else:
                self._ending = frozenset(m for m in self.legal_moves()
                                         if self._ends(seat, m.piece, m.lot_index))
        return self._ending

    def _check_build(self, seat: str, move: Move) -> tuple[int, int]:
        """(piece, lot) of a legal build, else IllegalMoveError naming the rule and what would do."""
        piece = PIECE_INDEX.get((move.kind, move.colour))
        lot = LOT_INDEX.get(str(move.lot).upper())
        if piece is None:
            raise IllegalMoveError(
                f"there is no {move.colour} {move.kind}: towers are red, blue or green; domes red, "
                f"blue, green or black", rule="piece",
                suggestions=self._suggest(Partial(None, None, lot)))
        if lot is None:
            raise IllegalMoveError(
                f"{move.lot!r} is not a lot: columns {COLUMNS[0]}-{COLUMNS[-1]}, rows 1-10",
                rule="lot", suggestions=self._suggest(Partial(move.kind, move.colour)))
        kind, colour = PIECES[piece]
        name = LOT_NAMES[lot]
        allow = self._allowance()
        streets = allow.streets
        here = Partial(kind, colour, lot)
        if self._board[lot]:
            raise IllegalMoveError(
                f"{name} is occupied by the {describe_structure(self._board, lot)}; structures "
                f"never move. {self._where(piece)}", rule="occupied", suggestions=self._suggest(here))
        if not self._supply[seat][piece]:
            raise IllegalMoveError(
                f"{seat} has no {colour} {kind}s left ({self._holdings(seat)})", rule="supply",
                suggestions=self._suggest(Partial(None, None, lot)))
        if lot not in streets.street_ok:
            raise IllegalMoveError(f"{self._street_reason(lot)}. {self._where(piece)}",
                                   rule="streets", suggestions=self._suggest(here))
        if lot not in streets.buildable:
            tile = TILE_OF[lot]
            others = [LOT_NAMES[i] for i in TILE_LOTS[tile] if i != lot and i in streets.street_ok]
            raise IllegalMoveError(
                f"{name} is the icon lot of {self.layout.tile_name(tile)}: it may be built on only "
                f"when no other lot of that tile can be; build first on {_or_list(others)}",
                rule="icon lot", suggestions=self._suggest(here))
        if lot not in allow.piece_lots[piece]:
            tile = TILE_OF[lot]
            tcolour = self.layout.tiles[tile].colour
            if IS_TOWER[piece]:
                raise IllegalMoveError(
                    f"{self.layout.tile_name(tile)} holds {self._tile_count[tile]} structure"
                    f"{'' if self._tile_count[tile] == 1 else 's'}, and the first two on a tile "
                    f"must match it: only a {tcolour} tower may go on {name} (black tiles take "
                    f"towers of any colour, and so does any tile with 2 or more structures). "
                    f"{self._where(piece)}", rule="tower colour", suggestions=self._suggest(here))
            raise IllegalMoveError(
                f"{colour} domes go on {colour} tiles while any {colour}-tile lot can be built on, "
                f"and {name} is on {self.layout.tile_name(tile)}. {self._where(piece)}",
                rule="dome colour", suggestions=self._suggest(here))
        return piece, lot

    def _check_claim(self, seat: str, move: Move, piece: int, lot: int) -> int:
        build = BUILD_MOVES[piece][lot]
        claim = LOT_INDEX.get(str(move.claim).upper())
        if not self._caps[seat]:
            raise IllegalMoveError(f"{seat} has no caps left, so it cannot claim a tower",
                                   rule="no caps", suggestions=[format_move(build)])
        if claim is None or (claim != lot and not (self._board[claim]
                                                  and IS_TOWER[self._board[claim] - 1])):
            what = "not a lot" if claim is None else (
                "empty" if not self._board[claim] else
                f"holds a {describe_structure(self._board, claim)}, and only towers are claimed")
            raise IllegalMoveError(
                f"cannot claim {move.claim}: it is {what}. {self._claimable_text(build)}",
                rule="claim target", suggestions=self._claim_suggestions(build, claim))
        if claim == lot and not IS_TOWER[piece]:
            raise IllegalMoveError(
                f"cannot claim {move.claim}: the {PIECES[piece][1]} dome built there is not a "
                f"tower. {self._claimable_text(build)}", rule="claim target",
                suggestions=self._claim_suggestions(build, claim))
        if claim != lot and self._cap[claim]:
            raise IllegalMoveError(
                f"cannot claim {move.claim}: that tower is already claimed by "
                f"{SEATS[self._cap[claim] - 1]}. {self._claimable_text(build)}", rule="claim target",
                suggestions=self._claim_suggestions(build, claim))
        if self._ends(seat, piece, lot):
            raise IllegalMoveError(
                f"{format_move(build)} ends the game (neither seat could build after it), and there "
                f"is no claim on the last turn: send it without the claim",
                rule="no claim on the last turn", suggestions=[format_move(build)])
        return claim

    # --- messages -----------------------------------------------------------------------------------
    def _suggest(self, partial: Partial) -> list[str]:
        moves = rank(self.legal_moves(), partial)
        texts = [format_move(m) for m in moves]
        if partial.claim:
            texts = [f"{t} claim {partial.claim}" for t in texts]
        return texts

    def _where(self, piece: int) -> str:
        kind, colour = PIECES[piece]
        lots = [LOT_NAMES[i] for i in self._allowance().piece_lots[piece]]
        if not lots:
            return f"No {colour} {kind} can be built anywhere now."
        shown = " ".join(lots[:12]) + (" ..." if len(lots) > 12 else "")
        return f"A {colour} {kind} may go on: {shown}."

    def _holdings(self, seat: str) -> str:
        held = [f"{n} {k} {c}" for (k, c), n in zip(PIECES, self._supply[seat], strict=True) if n]
        return f"{seat} holds " + (", ".join(held) if held else "nothing")

    def _street_reason(self, lot: int) -> str:
        name = LOT_NAMES[lot]
        streets = self._allowance().streets
        if streets.n_empty <= 1:
            return f"{name} is the last empty lot: the streets must keep at least one lot"
        if streets.critical[lot]:
            for b in NEIGHBOURS[lot]:
                if self._board[b] and [j for j in NEIGHBOURS[b] if streets.empty[j]] == [lot]:
                    return (f"building on {name} would cut the {describe_structure(self._board, b)} "
                            f"off the streets ({name} is its only street side)")
        return f"building on {name} would split the streets into separate networks"

    def _claimable_text(self, build: Move) -> str:
        targets = self.claimable_towers()
        if build.kind == "tower" and build.lot not in targets:
            targets = sorted([*targets, build.lot], key=LOT_INDEX.__getitem__)
        if not targets:
            return "There is no unclaimed tower to claim."
        return "Unclaimed towers: " + " ".join(targets) + "."

    def _claim_suggestions(self, build: Move, near: int | None) -> list[str]:
        targets = [LOT_INDEX[t] for t in self.claimable_towers()]
        if build.kind == "tower" and build.lot_index not in targets:
            targets.append(build.lot_index)
        if near is not None:
            targets.sort(key=lambda t: (grid_distance(t, near), t))
        return [format_move(build.with_claim(LOT_NAMES[t])) for t in targets[:4]] + [
            format_move(build)]
