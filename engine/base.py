"""The one small interface through which games plug into the server, the CLI and the tools.

The engine is pure: no I/O, no clock, no global random. Anything random or time-dependent (a shuffled
setup, dice, the Space Truckin' clock quadrant) is produced from values the caller passes in and is then
written into the record, so that replaying the record needs no generator at all.

Record shape (see ``schemas/record.schema.json``)::

    {"format": "pbem-record/1", "game": NAME, "options": {...}, "setup": {...},
     "players": {SEAT: {"name", "email"}}, "moves": [ENTRY, ...]}

An ENTRY is one of:

- a move ``{"seat": SEAT, "move": TEXT, "at": ISO}``: the only kind that counts as a ply;
- a chance event ``{"chance": {...}, "at": ISO}`` (e.g. the tile drawn and the quadrant read);
- a drop ``{"drop": SEAT, "at": ISO, "reason": TEXT}``: the seat leaves the game and the others play
  on (the server drops a player who forfeits at a deadline when the game can go on without them,
  ``reason`` "forfeit"). It is not a ply: like a chance event it belongs to the position of the move
  before it. Games that cannot go on without a player refuse it (``State.drop_seat``).

Readers ignore unknown keys, so the server can add ids, actions and results.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

from engine.i18n import _, active_translations, pgettext, using


class EngineError(Exception):
    """Base of every error a game raises for bad input; never a programming error."""


class OptionsError(EngineError):
    """Options that the game does not know or whose values are out of range."""


class SetupError(EngineError):
    """A setup (usually read from a record) that is not a valid starting position."""


class MoveError(EngineError):
    """A move that cannot be applied. ``suggestions`` are valid alternatives, nearest first."""

    def __init__(self, message: str, *, suggestions: Sequence[str] = (), rule: str | None = None):
        super().__init__(message)
        self.message = message
        self.suggestions = list(suggestions)
        self.rule = rule
        # Worded now, in the language of the reader the error is made for (see engine.i18n).
        self._did_you_mean = _(" Did you mean: {moves}?")

    def __str__(self) -> str:
        text = self.message
        if self.suggestions:
            text = text if text.endswith((".", "?", "!", ":")) else text + "."
            text += self._did_you_mean.format(moves=", ".join(self.suggestions[:5]))
        return text


class NotationError(MoveError):
    """The text was not understood as a move at all."""


class IllegalMoveError(MoveError):
    """The move was understood but breaks a rule; ``rule`` names it (e.g. "icon lot")."""


@dataclass(frozen=True)
class OptionSpec:
    """One game option as the CLI and the mail command ``new`` accept it.

    kind: ``flag`` (present = true), ``choice`` (one of ``choices``), ``int``, or ``seat-list`` (repeatable
    ``SEAT:A:B`` values, parsed by the game's ``parse_option_value``).
    """

    name: str
    kind: str
    help: str
    default: Any = None
    choices: tuple[str, ...] = ()


@dataclass
class Score:
    """Totals plus a breakdown a person can check by hand.

    ``details`` is JSON-able and game-specific; ``text`` is the human rendering used in result mails.
    ``winners`` is the list of seats with the highest total (several on a draw / shared win), among the
    seats still in the game.
    """

    totals: dict[str, int]
    text: str
    details: dict[str, Any] = field(default_factory=dict)
    # Seats dropped from the game (``State.drop_seat``): their points are still listed in ``totals``,
    # but they cannot win, since they left the game.
    dropped: list[str] = field(default_factory=list)

    @classmethod
    def deferred(cls, totals: dict[str, int], write_text: Callable[[], str],
                 details: dict[str, Any] | None = None) -> Score:
        """A Score whose ``text`` is written when first read, in the language active now.

        A move's mail shows only the totals, yet writing the breakdown was a sixth of the engine's
        CPU per move in the processor (Alien City, mid-game). ``write_text`` must not depend on
        anything that changes later (a state pushed on): it gets its inputs now."""
        score = cls(totals, "", {} if details is None else details)
        del score.text  # read through __getattr__ until written
        translations = active_translations()

        def write() -> str:
            with using(translations):
                return write_text()
        score.__dict__["_write_text"] = write
        return score

    def __getattr__(self, name: str) -> Any:
        """Only reached for an attribute the instance lacks: the text of a ``deferred`` score."""
        write = self.__dict__.pop("_write_text", None) if name == "text" else None
        if write is None:
            raise AttributeError(name)
        self.text = write()
        return self.text

    @property
    def winners(self) -> list[str]:
        playing = {s: v for s, v in self.totals.items() if s not in self.dropped} or self.totals
        if not playing:
            return []
        best = max(playing.values())
        return [s for s, v in playing.items() if v == best]


class State(ABC):
    """A position you can push moves onto, in the manner of python-chess's Board.

    Moves are game-specific hashable objects; their canonical text comes from ``move_text``. A State must
    be cheap to ``copy``.
    """

    game: Game

    # --- who and where -------------------------------------------------------------------------------
    @property
    @abstractmethod
    def seats(self) -> tuple[str, ...]: ...

    @property
    @abstractmethod
    def ply(self) -> int:
        """Number of moves applied (chance events do not count)."""

    @property
    @abstractmethod
    def to_move(self) -> str | None:
        """The seat to move, or None when the game is over or a chance event is pending."""

    @property
    @abstractmethod
    def is_over(self) -> bool: ...

    @property
    @abstractmethod
    def last_move(self) -> str | None:
        """Canonical text of the last move, with its seat, e.g. ``black: tower red C4``."""

    # --- moves ---------------------------------------------------------------------------------------
    @abstractmethod
    def parse_move(self, text: str) -> Any:
        """Forgiving parser; raises NotationError naming what was not understood, with suggestions.

        Parsing does not check legality (``push`` does), but suggestions are taken from legal moves.
        """

    @abstractmethod
    def move_text(self, move: Any) -> str:
        """Canonical text, the form written to records; ``parse_move(move_text(m)) == m``."""

    def local_move_text(self, move: Any) -> str:
        """The move in the reader's words (``engine.i18n``), for examples a person copies: it must
        parse back to the same move in every language. Canonical text where a game has no words of
        its own; records and one-tap links keep ``move_text``."""
        return self.move_text(move)

    @abstractmethod
    def legal_moves(self) -> list[Any]:
        """Every legal move of the seat to move, in canonical order, with optional parts not expanded
        (Alien City: builds without claims; Space Truckin': placements without ship choices)."""

    @abstractmethod
    def push(self, move: Any) -> list[str]:
        """Apply a move (object or text); raise IllegalMoveError with the rule broken.

        Returns announcements produced by the move (skipped turns, discarded tiles, completions...).
        """

    @abstractmethod
    def copy(self) -> State: ...

    def random_move(self, rng: random.Random) -> Any:
        """A uniformly chosen legal move; games override it to fill optional parts (claims, ships)
        so that self-play and property tests cover them."""
        return rng.choice(self.legal_moves())

    def move_variants(self, move: Any) -> list[Any]:
        """``move`` (one of ``legal_moves``) with each legal choice of the optional parts that
        ``legal_moves`` leaves out (Alien City's claims, Space Truckin's ships), the move without
        them first. Games with such parts override it; a move without any is its only variant."""
        return [move]

    def forced_move(self) -> Any | None:
        """The move of the seat to move when it has no choice at all: one legal move, with nothing
        optional to add to it (a pass that is the only move, the only build that can take no
        claim). None whenever there is a choice, or no move to make. What a server may play for a
        player who asked it to, without asking them."""
        if self.is_over or self.to_move is None or self.pending_chance() is not None:
            return None
        moves = self.legal_moves()
        if len(moves) != 1:
            return None
        variants = self.move_variants(moves[0])
        return variants[0] if len(variants) == 1 else None

    # --- chance (server-drawn randomness recorded in the record) ------------------------------------
    def pending_chance(self) -> str | None:
        """Name of the chance event the server must draw before the next move, or None."""
        return None

    def apply_chance(self, value: Mapping[str, Any]) -> list[str]:
        raise EngineError(f"{self.game.name} has no chance events")

    # --- players leaving (a drop entry in the record) ------------------------------------------------
    @property
    def dropped_seats(self) -> tuple[str, ...]:
        """Seats that have left the game, in the order they left; never the seat to move."""
        return ()

    def drop_seat(self, seat: str) -> list[str]:
        """Take ``seat`` out of the turn order; the others play on. Returns announcements.

        Only games that stay playable without a player implement it (Space Truckin'); for a
        two-player game a player leaving ends the game, which is the server's business, not a
        position. Raises EngineError, with the state unchanged, when the seat cannot be dropped.
        """
        raise EngineError(f"{self.game.title} cannot drop a player")

    # --- presentation --------------------------------------------------------------------------------
    # The drawing itself is the game's Renderer: a state never imports the code that draws it, so
    # rules and positions stay free of presentation and the import graph of a game has no cycle.
    def render(self, viewer: str | None = None, *, ended: bool = False) -> str:
        """The board as plain text, at most 78 columns, with legend, supplies, turn and last move.
        ``viewer`` is a seat or None (observer); hidden information is shown only to whom it belongs.
        ``ended``: the game was ended from outside the rules (a resignation, a loss on time, an
        agreement) in a position that would go on, so the drawing names nobody to move."""
        return self.game.renderer.text(self, viewer, ended=ended)

    def render_html(self, viewer: str | None = None, *, ended: bool = False) -> str:
        """An HTML fragment (a coloured table) of the same board; all text escaped."""
        return self.game.renderer.html(self, viewer, ended=ended)

    def render_legal(self, viewer: str | None = None) -> str:
        """The legal-move listing for a mail, short enough to read."""
        return self.game.renderer.legal(self, viewer)

    @abstractmethod
    def score(self) -> Score:
        """Scores as if the game were scored now (final scoring once it is over)."""

    def replay_info(self) -> dict[str, Any]:
        """The game-specific fields of one ``pbem replay --json`` line (beyond ply, to_move, over,
        legal, scores)."""
        return {}


StateT = TypeVar("StateT", bound=State, contravariant=True)


class Renderer(ABC, Generic[StateT]):
    """How one game draws its positions, for mail (text, HTML, legal moves) and the archive (SVG).

    It is reached through ``Game.renderer`` so that the server and the archive draw any game without
    naming it, and so that a game's state module never imports its drawing code. ``viewer`` is a seat
    or None (an observer): hidden information is drawn only for whom it belongs.
    """

    @abstractmethod
    def text(self, state: StateT, viewer: str | None, *, ended: bool = False) -> str:
        """What ``State.render`` returns: the plain-text board, at most 78 columns, the last move
        marked on it. ``ended`` (the game ended though the position would go on): the status says
        the game is over instead of naming the seat to move."""

    @abstractmethod
    def html(self, state: StateT, viewer: str | None, *, ended: bool = False) -> str:
        """What ``State.render_html`` returns: an HTML fragment for mail (inline attributes only,
        no SVG, a few kilobytes), all text escaped, the last move highlighted; ``ended`` as for
        ``text``."""

    @abstractmethod
    def legal(self, state: StateT, viewer: str | None) -> str:
        """What ``State.render_legal`` returns: the legal-move listing for a mail."""

    @abstractmethod
    def svg_defs(self, state: StateT, prefix: str) -> str:
        """The SVG ``defs`` content shared by every position of one game page: what does not change
        during a game, drawn once so that a page of many plies stays small. Every id starts with
        ``prefix``, so several games can share a document."""

    @abstractmethod
    def svg_board(self, state: StateT, prefix: str, label: str) -> str:
        """One position as a standalone ``<svg>`` that references ``svg_defs`` (same ``prefix``);
        ``label`` is its accessible title. Each piece or tile is one element with a class and data
        attributes, so readers of the markup can count what is on the board. The lot or cells of
        the last move carry an element of class ``last-move`` (with the same data attribute)."""

    @abstractmethod
    def svg_legend(self, state: StateT, prefix: str) -> str:
        """An HTML fragment saying what the symbols of ``svg_board`` mean, each drawn small as
        on the board (it may use ``svg_defs`` of the same ``prefix``): a page shows any game's
        legend without knowing the game."""

    def legal_groups(self, state: StateT, viewer: str | None
                     ) -> list[tuple[str, list[tuple[str, str]]]]:
        """The legal moves for one-tap links in mail: ``[(label, [(short text, move text)])]``.

        The default groups the canonical move texts by all their words but the last ("tower red":
        "C4", "D5"; "place E4": "0", "90"), which reads well for most notations; a game may group
        its moves more naturally."""
        groups: dict[str, list[tuple[str, str]]] = {}
        for move in state.legal_moves():
            text = state.move_text(move)
            label, _, last = text.rpartition(" ")
            groups.setdefault(label, []).append((last, text))
        return list(groups.items())


class ComputerPlayer(ABC):
    """A computer opponent for one game at one level (see ``Game.computer``).

    It is given only the position (a State holds no hidden information: Space Truckin's pile lives in
    the setup) and answers with a legal move for the seat to move. Implemented in ``engine.ai``.
    """

    level: int

    @abstractmethod
    def choose(self, state: State) -> Any:
        """A legal move (an object for ``state.push``) for ``state.to_move``. The same player (game,
        level, budget, seed) gives the same move for the same position whenever its search is not cut
        short by the clock; ``engine.ai.budget`` says exactly what a time budget changes."""


class Game(ABC):
    """A game as the server sees it: a name, options, setups and starting states."""

    name: ClassVar[str]  # registry key, e.g. "alien-city"
    title: ClassVar[str]  # "Alien City"
    id_prefix: ClassVar[str]  # short game ids: "ac" -> "ac-17"
    min_players: ClassVar[int]
    max_players: ClassVar[int]
    option_specs: ClassVar[tuple[OptionSpec, ...]] = ()

    @abstractmethod
    def seat_names(self, n_players: int) -> list[str]:
        """Seat names in turn order for a game of n players (raise OptionsError if n is impossible)."""

    def seat_label(self, seat: str) -> str:
        """A seat as the reader calls it (``black`` / ``Schwarz``): the server names seats to people
        through this, never by their stored key. Games whose seats have no words of their own in
        the engine catalog (context "seat") keep the key."""
        return pgettext("seat", seat)

    @abstractmethod
    def normalize_options(self, options: Mapping[str, Any] | None) -> dict[str, Any]:
        """Fill defaults and validate; raise OptionsError naming the bad key and what is allowed."""

    def parse_option_value(self, spec: OptionSpec, value: str, options: dict[str, Any]) -> None:
        """Store one ``seat-list`` option value (e.g. ``black:3:1``) into ``options``."""
        raise OptionsError(f"option {spec.name} takes no value")

    @abstractmethod
    def create_setup(
        self, options: Mapping[str, Any], rng: random.Random, n_players: int | None = None
    ) -> dict[str, Any]:
        """A random setup, fully explicit, JSON-able: a record replays from it without a generator."""

    @abstractmethod
    def start(self, options: Mapping[str, Any], setup: Mapping[str, Any]) -> State:
        """The position before the first move; raises SetupError for an invalid setup."""

    def draw_chance(self, state: State, setup: Mapping[str, Any], utc_seconds: int) -> dict[str, Any]:
        """Produce the value for ``state.pending_chance()`` from the hidden setup and the server clock's
        seconds (passed in: the engine has no clock)."""
        raise EngineError(f"{self.name} has no chance events")

    def redact_setup(self, setup: Mapping[str, Any]) -> dict[str, Any]:
        """The setup as a player may see it (Space Truckin' drops the future draw pile)."""
        return dict(setup)

    @abstractmethod
    def help_topics(self) -> dict[str, str]:
        """Help texts by topic: at least ``rules``, ``rulings`` and ``notation``."""

    @property
    @abstractmethod
    def renderer(self) -> Renderer[Any]:
        """The game's drawings; ``State.render*`` and the archive's SVG go through it."""

    # Levels of computer opponent the game offers (``engine.ai.levels`` describes them).
    computer_levels: ClassVar[tuple[int, ...]] = ()

    def computer(self, level: int, budget: Any = None, seed: int = 0) -> ComputerPlayer:
        """A computer player at ``level`` (one of ``computer_levels``). ``budget``: seconds a move
        may take (a float), an ``engine.ai.Budget`` (seconds and/or iterations), or None for the
        level's default. ``seed`` makes it deterministic (see ``ComputerPlayer.choose``).
        Raises EngineError naming the levels there are."""
        raise EngineError(f"{self.title} has no computer player")


def replay(
    game: Game,
    options: Mapping[str, Any] | None,
    setup: Mapping[str, Any],
    entries: Iterable[Mapping[str, Any]],
    *,
    upto_ply: int | None = None,
) -> State:
    """Rebuild the state from a record's entries; raises ReplayError naming the ply and move."""
    state = game.start(game.normalize_options(options), setup)
    for index, entry in enumerate(entries):
        if upto_ply is not None and state.ply >= upto_ply and is_move_entry(entry):
            break
        apply_entry(state, entry, index)
    return state


def random_positions(game: Game, options: Mapping[str, Any] | None, n_players: int,
                     rng: random.Random) -> Iterator[State]:
    """Every position of one game of random moves (``State.random_move``), from the start to the
    end, each with its chance events drawn (the clock's seconds taken from ``rng``). It yields one
    state, moved on after each yield: copy what you keep. For tests, benchmarks and self-play."""
    options = game.normalize_options(options)
    setup = game.create_setup(options, rng, n_players)
    state = game.start(options, setup)
    while True:
        while state.pending_chance() is not None and not state.is_over:
            state.apply_chance(game.draw_chance(state, setup, rng.randrange(60)))
        yield state
        if state.is_over:
            return
        state.push(state.random_move(rng))


def is_move_entry(entry: Mapping[str, Any]) -> bool:
    """Whether a record entry is a move (a ply), not a chance event or a drop; every tool that counts
    plies or cuts a record at a ply must ask this, so that the kinds of entries stay in one place."""
    return "chance" not in entry and "drop" not in entry


def apply_entry(state: State, entry: Mapping[str, Any], index: int) -> list[str]:
    """Apply one record entry (a move, a chance event or a drop) with checks that the seat is right."""
    if "chance" in entry:
        if state.pending_chance() is None:
            raise ReplayError(state.ply, index, "chance", "no chance event is due here")
        try:
            return state.apply_chance(entry["chance"])
        except EngineError as exc:
            raise ReplayError(state.ply, index, "chance", str(exc)) from exc
    if "drop" in entry:
        what = f"drop {entry['drop']}"
        if state.is_over:
            raise ReplayError(state.ply, index, what, "the game is already over")
        try:
            return state.drop_seat(str(entry["drop"]))
        except EngineError as exc:
            raise ReplayError(state.ply, index, what, str(exc)) from exc
    text = str(entry.get("move", ""))
    seat = entry.get("seat")
    if state.is_over:
        raise ReplayError(state.ply + 1, index, text, "the game is already over")
    if seat is not None and seat != state.to_move:
        raise ReplayError(state.ply + 1, index, text, f"it is {state.to_move}'s turn, not {seat}'s")
    try:
        return state.push(state.parse_move(text))
    except MoveError as exc:
        raise ReplayError(state.ply + 1, index, text, str(exc), rule=exc.rule) from exc


class ReplayError(EngineError):
    """A record whose moves do not replay; ``ply`` is 1-based (the move that failed)."""

    def __init__(self, ply: int, index: int, move: str, reason: str, rule: str | None = None):
        self.ply, self.index, self.move, self.reason, self.rule = ply, index, move, reason, rule
        super().__init__(f"ply {ply}: {move!r}: {reason}")
