"""The Alien City position: pieces on the board, supplies, caps, whose turn, and how moves change it.

Everything derived from the board (street analysis, where each piece may go, which builds end the
game) is computed lazily once per position and dropped on ``push``; copies share it because it is
immutable.
"""

from __future__ import annotations

import json
import random
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
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
from engine.alien_city.moves import BUILD_MOVES, BUILD_TEXTS, Move, format_move
from engine.alien_city.notation import (
    Partial,
    Unparsed,
    local_move,
    local_piece,
    parse,
    rank,
    seat_name,
    tile_name,
    words,
)
from engine.alien_city.rules import Allowance, BuildProbe, allowance, can_build
from engine.alien_city.scoring import score_details, score_text
from engine.alien_city.streets import NEAR, street_survives
from engine.base import Game, IllegalMoveError, NotationError, Score, State
from engine.i18n import _, active_translations, ngettext


@dataclass(frozen=True)
class Structure:
    """What stands on a lot, as the renderers and the server see it."""

    kind: str
    colour: str
    claimed_by: str | None


def _or_list(items: list[str]) -> str:
    if len(items) == 1:
        return items[0]
    return _("{items} or {last}").format(items=", ".join(items[:-1]), last=items[-1])


# Drawings by position, for states replayed from a record: the mail that answers a move shows again
# the position that the mail before it showed, from a state rebuilt from the stored record (a new
# object). The most recently drawn positions are kept.
_DRAWN: OrderedDict[tuple[Any, ...], dict[tuple[Any, ...], Any]] = OrderedDict()
_DRAWN_SIZE = 1024
_DRAWN_LOCK = threading.Lock()


class _Scored:
    """A position's score details and, once asked, their text (in the language of the drawing
    that holds this)."""

    def __init__(self, details: dict[str, Any], options: Mapping[str, Any], final: bool):
        self.details = details
        self._options = options
        self._final = final
        self._text: str | None = None

    def text(self) -> str:
        if self._text is None:
            self._text = score_text(self.details, self._options, self._final)
        return self._text


def other_seat(seat: str) -> str:
    return SEATS[1] if seat == SEATS[0] else SEATS[0]


class AlienCityState(State):
    """A position, pushed forward move by move (see ``engine.base.State``).

    Public additions to the interface: :meth:`ending_moves`, :meth:`ending_set`, :meth:`is_ending`,
    :meth:`drawing`, :meth:`setup_drawing`, :meth:`legal_lots`, :meth:`open_build`,
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
        self._hand_built = False  # set_position was used: the moves no longer name the position
        self._ply = 0
        self._last: str | None = None
        self._last_move: Move | None = None
        self._history: list[tuple[str, str]] = []
        self._origin: str | None = None  # what the game was made from, as _share_drawn names it
        # Drawings of what no move changes (see setup_drawing); copies share them.
        self._setup_drawn: dict[tuple[Any, ...], Any] = {}
        self._clear_cache()
        if self.options.get("symmetric"):
            self._place_symmetric_towers()

    # --- construction helpers ---------------------------------------------------------------------
    def clear_cache(self) -> None:
        """Forget everything derived from the position (street analysis, allowed lots, ending marks).

        Never needed for correctness; benchmarks use it to time a position from cold, so the
        drawings of the same position made by other states are not taken either.
        """
        self._clear_cache()
        self._drawn_shared = True

    def _clear_cache(self) -> None:
        self._allow: Allowance | None = None
        self._probe: BuildProbe | None = None
        self._survive: dict[int, bool] = {}
        self._after: dict[int, Allowance] = {}
        self._ending: frozenset[Move] | None = None
        # Drawings of this position (renderer output by kind, viewer and translations); shared by
        # copies, since a copy shows the same position until it is pushed (which starts a new dict),
        # and with states replayed to the same position (see _DRAWN).
        self._drawn: dict[tuple[Any, ...], Any] = {}
        self._drawn_shared = False  # _drawn was looked up in (or entered into) _DRAWN

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
        self._hand_built = True
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

    def local_move_text(self, move: Move) -> str:
        return local_move(move)

    def legal_lots(self) -> list[tuple[int, tuple[int, ...]]]:
        """``legal_moves`` by piece, without making the moves: (piece index, its legal lots
        ascending) for every piece the seat to move holds and can build."""
        seat = self._to_move
        if seat is None:
            return []
        supply = self._supply[seat]
        lots = self._allowance().piece_lots
        return [(p, lots[p]) for p in range(N_PIECES) if supply[p] and lots[p]]

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
            raise NotationError(_("not an Alien City move: {move}").format(move=repr(move)))
        seat = self._to_move
        if seat is None:
            raise IllegalMoveError(_("the game is over: no more moves"), rule="game over")
        piece, lot = self._check_build(seat, move)
        claim = self._check_claim(seat, move, piece, lot) if move.claim is not None else None

        self._put(lot, piece)
        self._supply[seat][piece] -= 1
        if claim is not None:
            self._cap[claim] = SEATS.index(seat) + 1
            self._caps[seat] -= 1
        self._record(seat, piece, lot, claim)
        allow = self._allowance()
        return self._next_turn(seat, lambda s: can_build(allow, self._supply[s]))

    def _record(self, seat: str, piece: int, lot: int, claim: int | None) -> None:
        self._ply += 1
        move = BUILD_MOVES[piece][lot]
        if claim is None:
            text = BUILD_TEXTS[piece][lot]
        else:
            move = move.with_claim(LOT_NAMES[claim])
            text = format_move(move)
        self._last = f"{seat}: {text}"
        self._last_move = move
        self._history.append((seat, text))
        self._clear_cache()

    def _next_turn(self, seat: str, has_build: Callable[[str], bool]) -> list[str]:
        """Rule 3 of a turn: the other seat if it can build, else the same seat, else the end."""
        other = other_seat(seat)
        if has_build(other):
            self._to_move = other
            return []
        if has_build(seat):
            self._to_move = seat
            return [_("{other} has no legal build and passes; {seat} moves again.").format(
                other=seat_name(other), seat=seat_name(seat))]
        self._to_move = None
        return [_("Neither seat has a legal build: the game is over.")]

    def score(self) -> Score:
        # Once per position (the mails about a move show it before and after); each caller gets
        # totals of its own, which it may keep in a record. The text is written only when read
        # (a move's mail shows the totals alone), once per position and language.
        final = self.is_over
        scored = self.drawing(("score", final), lambda: _Scored(score_details(
            self._board, self._cap, self.layout, self.options), self.options, final))
        return Score.deferred(dict(scored.details["totals"]), scored.text, scored.details)

    def totals(self) -> dict[str, int]:
        """``score().totals`` without the text: what a search asks of every position it scores."""
        return score_details(self._board, self._cap, self.layout, self.options)["totals"]

    def replay_info(self) -> dict[str, Any]:
        return {"ending": [format_move(m) for m in self.ending_moves()]}

    # --- public additions -------------------------------------------------------------------------
    def ending_moves(self) -> list[Move]:
        """The legal builds after which neither seat could build: a claim may not go with them."""
        ending = self.ending_set()
        return [m for m in self.legal_moves() if m in ending] if ending else []

    def drawing(self, key: tuple[Any, ...], draw: Callable[[], Any]) -> Any:
        """What ``draw`` returns for this position, drawn once: the renderer asks for its text,
        HTML and listings through this, since every mail about a position shows the same ones. The
        key names the drawing and its viewer; the engine's active translations are added to it."""
        key = (*key, active_translations())
        if not self._drawn_shared:
            self._share_drawn()
        found = self._drawn.get(key)
        if found is None:
            found = self._drawn[key] = draw()
        return found

    def setup_drawing(self, key: tuple[Any, ...], draw: Callable[[], Any]) -> Any:
        """What ``draw`` returns for this game's layout and options, drawn once for the state and
        its copies: the parts of a board that no move changes (tiles, labels, icon marks). Keyed
        like ``drawing``; ``draw`` must read nothing of the position."""
        key = (*key, active_translations())
        found = self._setup_drawn.get(key)
        if found is None:
            found = self._setup_drawn[key] = draw()
        return found

    def _share_drawn(self) -> None:
        """Take the drawings of a state replayed earlier to this very position, or offer ours.

        The position is named by everything it was made from: the layout, the options, who began
        (and the dice that said so), and every move since. A hand-built position
        (``set_position``) has no such name and keeps its drawings to itself."""
        self._drawn_shared = True
        if self._hand_built:
            return
        origin = self._origin
        if origin is None:  # once per game's state (copies share it): a string hashes once
            origin = self._origin = json.dumps(
                [[tile.to_json() for tile in self.layout.tiles], self.first, self.options, self.dice],
                sort_keys=True, default=repr)
        name = (origin, tuple(self._history))
        with _DRAWN_LOCK:
            known = _DRAWN.get(name)
            if known is None:
                _DRAWN[name] = self._drawn
                if len(_DRAWN) > _DRAWN_SIZE:
                    _DRAWN.popitem(last=False)
            else:
                _DRAWN.move_to_end(name)
                known.update(self._drawn)
                self._drawn = known

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
        return self.open_build(towers_only=not has_target) is not None

    def open_build(self, towers_only: bool = False) -> Move | None:
        """The first legal build (in ``legal_moves`` order) that does not end the game, a tower if
        ``towers_only``: one a claim may go with. None if there is none."""
        ending = self.ending_set()
        for piece, lots in self.legal_lots():
            if towers_only and not IS_TOWER[piece]:
                continue
            builds = BUILD_MOVES[piece]
            for lot in lots:
                if builds[lot] not in ending:
                    return builds[lot]
        return None

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

    def move_variants(self, move: Move) -> list[Move]:
        """The build alone, then with each claim it may take (a cap left, an unclaimed tower on the
        board or the tower being built, and not the last build of the game)."""
        if not self.can_claim(move):
            return [move]
        targets = self.claimable_towers()
        if move.kind == "tower" and move.lot not in targets:
            targets.append(move.lot)
        return [move, *(move.with_claim(lot) for lot in targets)]

    # --- the search's fast path ---------------------------------------------------------------------
    # Random playouts need one random legal build per move, not the listing of all of them, and no
    # validation of a build they picked from the rules themselves. Same rules (rules.BuildProbe),
    # same bookkeeping (_record, _next_turn) as push.
    def sample_build(self, rng: random.Random) -> tuple[int, int] | None:
        """(piece, lot) of a uniformly random legal build of the seat to move (each entry of
        ``legal_moves`` equally likely), or None when the game is over. Tries random candidates one
        at a time (rules.BuildProbe); should they keep failing (a crowded late board) it draws from
        the full listing."""
        seat = self._to_move
        if seat is None:
            return None
        found = self._build_probe().sample(self._supply[seat], rng)
        if found is not None:
            return found
        moves = self.legal_moves()
        move = moves[int(rng.random() * len(moves))]
        return move.piece, move.lot_index

    def push_build(self, piece: int, lot: int, claim: int = -1) -> None:
        """Apply a build already known to be legal (from ``sample_build`` or ``legal_moves``), then
        cap the tower on lot ``claim`` (-1: none) unless the build ended the game: the rules allow
        no claim on the last turn. The claim target is trusted too. For search copies only: a
        move from a player always goes through ``push``, which checks everything."""
        seat = self._to_move
        assert seat is not None and self._supply[seat][piece] > 0 and not self._board[lot]
        before = self._probe
        self._put(lot, piece)
        self._supply[seat][piece] -= 1
        probe = (BuildProbe(self._board, self._tile_count, self.layout) if before is None
                 else before.after_build(lot, self._tile_count[TILE_OF[lot]]))
        self._next_turn(seat, lambda s: probe.any_build(self._supply[s]))
        if claim >= 0 and self._to_move is not None and self._caps[seat]:
            self._cap[claim] = SEATS.index(seat) + 1
            self._caps[seat] -= 1
        else:
            claim = -1
        self._record(seat, piece, lot, claim if claim >= 0 else None)
        self._probe = probe  # describes the position after the build; a claim changes no lot

    def claimable_lots(self) -> list[int]:
        """Lot indices of the unclaimed towers on the board (``claimable_towers`` by index)."""
        board, cap = self._board, self._cap
        return [i for i in range(N_LOTS) if board[i] and IS_TOWER[board[i] - 1] and not cap[i]]

    def cells(self) -> tuple[Sequence[int], Sequence[int]]:
        """The board and its caps as the scoring reads them, for evaluation functions: ``board[lot]``
        is 0 or 1 + a piece index of ``board.PIECES``; ``cap[lot]`` is 0 or 1 + the claiming seat's
        index. Read-only views of the live position (no copy, for speed)."""
        return self._board, self._cap

    def held(self, seat: str) -> Sequence[int]:
        """Pieces ``seat`` holds, by piece index (``supply`` by name); read-only."""
        return self._supply[seat]

    def _build_probe(self) -> BuildProbe:
        probe = self._probe
        if probe is None:
            probe = self._probe = BuildProbe(self._board, self._tile_count, self.layout)
        return probe

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
            streets = self._allowance().streets
            if lot in self._after:
                known = bool(self._after[lot].streets.street_ok)
            elif streets.n_empty >= 3 and streets.simple & ~NEAR[lot]:
                known = True  # what street_survives finds in its step 2, without the search
            else:
                known = street_survives(streets, self._board, lot, self.layout.icon_bits)
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

    def ending_set(self) -> frozenset[Move]:
        """``ending_moves`` as a set, to ask about one build after another."""
        if self._ending is None:
            self._ending = frozenset(self._ending_builds())
        return self._ending

    def _ending_builds(self) -> list[Move]:
        """``_ends`` for every legal build, asked once per lot where the piece does not matter (some
        dome is left after the build: then only the streets decide)."""
        seat = self._to_move
        if seat is None:
            return []
        if self._total_left() == 1:
            return self.legal_moves()
        mover = self._supply[seat]
        domes = sum(mover[q] for q in DOME_PIECES)
        others_domes = any(self._supply[other_seat(seat)][q] for q in DOME_PIECES)
        lots = self._allowance().piece_lots
        doomed = -1  # lots after a build on which no lot is street-legal: worked out when needed
        out: list[Move] = []
        for p in range(N_PIECES):
            if not mover[p]:
                continue
            table = BUILD_MOVES[p]
            if others_domes or domes - (0 if IS_TOWER[p] else 1) > 0:
                if doomed < 0:
                    doomed = self._doomed_lots()
                if doomed:
                    out += [table[i] for i in lots[p] if doomed >> i & 1]
            else:
                out += [table[i] for i in lots[p] if self._ends(seat, p, i)]
        return out

    def _doomed_lots(self) -> int:
        """The buildable lots after a build on which no lot would be street-legal, as a bitboard;
        ``_survives`` is asked only about lots near every lot that surely stays legal."""
        streets = self._allowance().streets
        simple = streets.simple if streets.n_empty >= 3 else 0
        bits = 0
        for lot in streets.buildable:
            if not simple & ~NEAR[lot] and not self._survives(lot):
                bits |= 1 << lot
        return bits

    def _check_build(self, seat: str, move: Move) -> tuple[int, int]:
        """(piece, lot) of a legal build, else IllegalMoveError naming the rule and what would do."""
        piece = PIECE_INDEX.get((move.kind, move.colour))
        lot = LOT_INDEX.get(str(move.lot).upper())
        if piece is None:
            raise IllegalMoveError(
                _("there is no {colour} {kind}: towers are red, blue or green; domes red, "
                  "blue, green or black").format(colour=move.colour, kind=move.kind), rule="piece",
                suggestions=self._suggest(Partial(None, None, lot)))
        if lot is None:
            raise IllegalMoveError(
                _("{lot} is not a lot: columns {first}-{last}, rows 1-10").format(
                    lot=repr(move.lot), first=COLUMNS[0], last=COLUMNS[-1]),
                rule="lot", suggestions=self._suggest(Partial(move.kind, move.colour)))
        kind, colour = PIECES[piece]
        name = LOT_NAMES[lot]
        allow = self._allowance()
        streets = allow.streets
        here = Partial(kind, colour, lot)
        if self._board[lot]:
            raise IllegalMoveError(
                _("{lot} is occupied by the {structure}; structures never move. {where}").format(
                    lot=name, structure=self._describe(lot), where=self._where(piece)),
                rule="occupied", suggestions=self._suggest(here))
        if not self._supply[seat][piece]:
            raise IllegalMoveError(
                _("{seat} has no {colour} {kind}s left ({holdings})").format(
                    seat=seat_name(seat), colour=words()[colour], kind=words()[kind],
                    holdings=self._holdings(seat)), rule="supply",
                suggestions=self._suggest(Partial(None, None, lot)))
        if lot not in streets.street_ok:
            raise IllegalMoveError(f"{self._street_reason(lot)}. {self._where(piece)}",
                                   rule="streets", suggestions=self._suggest(here))
        if lot not in streets.buildable:
            tile = TILE_OF[lot]
            others = [LOT_NAMES[i] for i in TILE_LOTS[tile] if i != lot and i in streets.street_ok]
            raise IllegalMoveError(
                _("{lot} is the icon lot of {tile}: it may be built on only when no other lot of "
                  "that tile can be; build first on {others}").format(
                    lot=name, tile=tile_name(self.layout, tile), others=_or_list(others)),
                rule="icon lot", suggestions=self._suggest(here))
        if lot not in allow.piece_lots[piece]:
            tile = TILE_OF[lot]
            tcolour = self.layout.tiles[tile].colour
            if IS_TOWER[piece]:
                raise IllegalMoveError(
                    ngettext("{tile} holds {n} structure, and the first two on a tile must match it: "
                             "only a {colour} tower may go on {lot} (black tiles take towers of any "
                             "colour, and so does any tile with 2 or more structures). {where}",
                             "{tile} holds {n} structures, and the first two on a tile must match it: "
                             "only a {colour} tower may go on {lot} (black tiles take towers of any "
                             "colour, and so does any tile with 2 or more structures). {where}",
                             self._tile_count[tile]).format(
                        tile=tile_name(self.layout, tile), n=self._tile_count[tile],
                        colour=words()[tcolour], lot=name, where=self._where(piece)),
                    rule="tower colour", suggestions=self._suggest(here))
            raise IllegalMoveError(
                _("{colour} domes go on {colour} tiles while any {colour}-tile lot can be built on, "
                  "and {lot} is on {tile}. {where}").format(
                    colour=words()[colour], lot=name, tile=tile_name(self.layout, tile),
                    where=self._where(piece)),
                rule="dome colour", suggestions=self._suggest(here))
        return piece, lot

    def _check_claim(self, seat: str, move: Move, piece: int, lot: int) -> int:
        build = BUILD_MOVES[piece][lot]
        claim = LOT_INDEX.get(str(move.claim).upper())
        if not self._caps[seat]:
            raise IllegalMoveError(_("{seat} has no caps left, so it cannot claim a tower").format(
                seat=seat_name(seat)), rule="no caps", suggestions=[local_move(build)])
        if claim is None or (claim != lot and not (self._board[claim]
                                                  and IS_TOWER[self._board[claim] - 1])):
            raise IllegalMoveError(
                (_("cannot claim {lot}: it is not a lot. {claimable}") if claim is None else
                 _("cannot claim {lot}: it is empty. {claimable}") if not self._board[claim] else
                 _("cannot claim {lot}: it holds a {structure}, and only towers are claimed. "
                   "{claimable}")).format(lot=move.claim, structure=self._describe(claim) if claim is not None
                                          and self._board[claim] else "",
                                          claimable=self._claimable_text(build)),
                rule="claim target", suggestions=self._claim_suggestions(build, claim))
        if claim == lot and not IS_TOWER[piece]:
            raise IllegalMoveError(
                _("cannot claim {lot}: the {colour} dome built there is not a tower. {claimable}")
                .format(lot=move.claim, colour=words()[PIECES[piece][1]],
                        claimable=self._claimable_text(build)), rule="claim target",
                suggestions=self._claim_suggestions(build, claim))
        if claim != lot and self._cap[claim]:
            raise IllegalMoveError(
                _("cannot claim {lot}: that tower is already claimed by {seat}. {claimable}").format(
                    lot=move.claim, seat=seat_name(SEATS[self._cap[claim] - 1]),
                    claimable=self._claimable_text(build)), rule="claim target",
                suggestions=self._claim_suggestions(build, claim))
        if self._ends(seat, piece, lot):
            raise IllegalMoveError(
                _("{move} ends the game (neither seat could build after it), and there is no claim "
                  "on the last turn: send it without the claim").format(move=local_move(build)),
                rule="no claim on the last turn", suggestions=[local_move(build)])
        return claim

    # --- messages -----------------------------------------------------------------------------------
    def _suggest(self, partial: Partial) -> list[str]:
        moves = rank(self.legal_moves(), partial)
        if partial.claim:
            return [local_move(m.with_claim(partial.claim)) for m in moves]
        return [local_move(m) for m in moves]

    def _where(self, piece: int) -> str:
        kind, colour = PIECES[piece]
        lots = [LOT_NAMES[i] for i in self._allowance().piece_lots[piece]]
        w = words()
        if not lots:
            return _("No {colour} {kind} can be built anywhere now.").format(colour=w[colour], kind=w[kind])
        shown = " ".join(lots[:12]) + (" ..." if len(lots) > 12 else "")
        return _("A {colour} {kind} may go on: {lots}.").format(colour=w[colour], kind=w[kind], lots=shown)

    def _holdings(self, seat: str) -> str:
        w = words()
        held = [f"{n} {w[k]} {w[c]}" for (k, c), n in zip(PIECES, self._supply[seat], strict=True) if n]
        return _("{seat} holds {pieces}").format(seat=seat_name(seat),
                                                pieces=", ".join(held) if held else _("nothing"))

    def _describe(self, lot: int) -> str:
        """What stands on a lot, in the reader's words: ``red tower C4`` / ``Turm rot C4``."""
        kind, colour = PIECES[self._board[lot] - 1]
        return f"{local_piece(kind, colour)} {LOT_NAMES[lot]}"

    def _street_reason(self, lot: int) -> str:
        name = LOT_NAMES[lot]
        streets = self._allowance().streets
        if streets.n_empty <= 1:
            return _("{lot} is the last empty lot: the streets must keep at least one lot").format(lot=name)
        if streets.critical[lot]:
            for b in NEIGHBOURS[lot]:
                if self._board[b] and [j for j in NEIGHBOURS[b] if streets.empty[j]] == [lot]:
                    return _("building on {lot} would cut the {structure} off the streets ({lot} is "
                             "its only street side)").format(lot=name, structure=self._describe(b))
        return _("building on {lot} would split the streets into separate networks").format(lot=name)

    def _claimable_text(self, build: Move) -> str:
        targets = self.claimable_towers()
        if build.kind == "tower" and build.lot not in targets:
            targets = sorted([*targets, build.lot], key=LOT_INDEX.__getitem__)
        if not targets:
            return _("There is no unclaimed tower to claim.")
        return _("Unclaimed towers: {lots}.").format(lots=" ".join(targets))

    def _claim_suggestions(self, build: Move, near: int | None) -> list[str]:
        targets = [LOT_INDEX[t] for t in self.claimable_towers()]
        if build.kind == "tower" and build.lot_index not in targets:
            targets.append(build.lot_index)
        if near is not None:
            targets.sort(key=lambda t: (grid_distance(t, near), t))
        return [local_move(build.with_claim(LOT_NAMES[t])) for t in targets[:4]] + [
            local_move(build)]
