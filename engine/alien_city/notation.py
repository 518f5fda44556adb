"""Reading move texts the way people type them in mail, and ranking "did you mean" suggestions.

Canonical: ``tower red C4``, ``dome black A1``, ``tower blue E7 claim C4``. Also accepted, in any
case: two-letter piece codes in either order (``TR``, ``RT``, ``DK`` with K = black), codes glued to
the lot with a hyphen or not (``RT-C4``, ``trc4``), words in either order (``red tower c4``), a claim
written ``claim C4``, ``+ C4``, ``+C4`` or ``(C4)``, extra spaces and a trailing period.

Parsing does not know the position; when it fails it reports what it did understand (a
:class:`Partial`) so the state can rank its legal moves as suggestions.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from engine.alien_city.board import (
    COLUMNS,
    LOT_INDEX,
    N_COLUMNS,
    N_ROWS,
    PIECE_INDEX,
    grid_distance,
    lot_index,
)
from engine.alien_city.moves import BUILD_MOVES, Move

KIND_WORDS = {"tower": "tower", "towers": "tower", "t": "tower",
              "dome": "dome", "domes": "dome", "d": "dome"}
COLOUR_WORDS = {"red": "red", "r": "red", "blue": "blue", "b": "blue", "green": "green", "g": "green",
                "black": "black", "k": "black"}
CLAIM_WORDS = ("claim", "claims", "+", "(")
_CODE_KIND = {"t": "tower", "d": "dome"}
_CODE_COLOUR = {"r": "red", "b": "blue", "g": "green", "k": "black"}
_LOT_RE = re.compile(r"^[a-h](?:10|[1-9])$")
_LOTLIKE_RE = re.compile(r"^([a-z])(\d+)$")
_GLUED_RE = re.compile(r"^([tdrbgk]{2})([a-h](?:10|[1-9]))$")
_VOCABULARY = ("tower", "dome", "red", "blue", "green", "black", "claim")


@dataclass
class Partial:
    """What a failed parse did understand; lot is an index (the nearest lot for an off-board one)."""

    kind: str | None = None
    colour: str | None = None
    lot: int | None = None
    claim: str | None = None


class Unparsed(Exception):
    """Raised by :func:`parse`; the state turns it into a NotationError with suggestions."""

    def __init__(self, message: str, partial: Partial):
        super().__init__(message)
        self.message = message
        self.partial = partial


def _tokens(text: str) -> list[str]:
    s = text.strip()
    while s.endswith("."):
        s = s[:-1].rstrip()
    s = re.sub(r"([+()])", r" \1 ", s)
    s = s.replace("-", " ").replace(",", " ")
    return s.split()


def _code(token: str) -> tuple[str, str] | None:
    """``tr`` / ``rt`` -> ("tower", "red"); None if the token is not a piece code."""
    if len(token) != 2:
        return None
    a, b = token[0], token[1]
    if a in _CODE_KIND and b in _CODE_COLOUR:
        return _CODE_KIND[a], _CODE_COLOUR[b]
    if b in _CODE_KIND and a in _CODE_COLOUR:
        return _CODE_KIND[b], _CODE_COLOUR[a]
    return None


def _nearest_lot(column_letter: str, row: int) -> int:
    column = min(max(ord(column_letter) - ord("a"), 0), N_COLUMNS - 1)
    return lot_index(column, min(max(row, 1), N_ROWS))


def _bad_lot_message(token: str) -> str:
    return (f'"{token}" is not a lot: columns are {COLUMNS[0]}-{COLUMNS[-1]} and rows 1-{N_ROWS} '
            f"(e.g. C4)")


def parse(text: str) -> Move:
    """Parse a move text; raise :class:`Unparsed` naming the first token not understood."""
    partial = Partial()
    raw = _tokens(text)
    if not raw:
        raise Unparsed("empty move: write e.g. \"tower red C4\" or \"dome black A1 claim C4\"",
                       partial)
    lowered = [t.lower() for t in raw]
    claim_at = next((i for i, t in enumerate(lowered) if t in CLAIM_WORDS), len(raw))
    problems: list[str] = []

    def set_kind(value: str, token: str) -> None:
        if partial.kind is not None and partial.kind != value:
            problems.append(f'"{token}" names a second kind of piece (already {partial.kind})')
        partial.kind = partial.kind or value

    def set_colour(value: str, token: str) -> None:
        if partial.colour is not None and partial.colour != value:
            problems.append(f'"{token}" names a second colour (already {partial.colour})')
        partial.colour = partial.colour or value

    def set_lot(value: int, token: str) -> None:
        if partial.lot is not None:
            problems.append(f'"{token}" names a second lot to build on; put a claim after "claim"')
            return
        partial.lot = value

    for token, low in zip(raw[:claim_at], lowered[:claim_at], strict=True):
        if low in KIND_WORDS:
            set_kind(KIND_WORDS[low], token)
        elif low in COLOUR_WORDS:
            set_colour(COLOUR_WORDS[low], token)
        elif (code := _code(low)) is not None:
            set_kind(code[0], token)
            set_colour(code[1], token)
        elif _LOT_RE.match(low):
            set_lot(LOT_INDEX[low.upper()], token)
        elif (glued := _GLUED_RE.match(low)) and (code := _code(glued.group(1))) is not None:
            set_kind(code[0], token)
            set_colour(code[1], token)
            set_lot(LOT_INDEX[glued.group(2).upper()], token)
        elif lotlike := _LOTLIKE_RE.match(low):
            if partial.lot is None:
                partial.lot = _nearest_lot(lotlike.group(1), int(lotlike.group(2)))
            problems.append(_bad_lot_message(token))
        else:
            near = difflib.get_close_matches(low, _VOCABULARY, n=1, cutoff=0.6)
            hint = ""
            if near:
                hint = f' (did you mean "{near[0]}"?)'
                if near[0] in KIND_WORDS and partial.kind is None:
                    partial.kind = KIND_WORDS[near[0]]
                elif near[0] in COLOUR_WORDS and partial.colour is None:
                    partial.colour = COLOUR_WORDS[near[0]]
            problems.append(f'could not understand "{token}"{hint}: expected a kind (tower, dome), '
                            f"a colour (red, blue, green, black), a lot (A1-H10) or a claim")

    if claim_at < len(raw):
        marker = raw[claim_at]
        rest = [(t, lo) for t, lo in zip(raw[claim_at + 1:], lowered[claim_at + 1:], strict=True)
                if lo != ")"]
        lots = [t for t, lo in rest if _LOT_RE.match(lo)]
        others = [t for t, lo in rest if not _LOT_RE.match(lo)]
        if len(lots) == 1 and not others:
            partial.claim = lots[0].upper()
        elif others:
            token = others[0]
            lotlike = _LOTLIKE_RE.match(token.lower())
            if lotlike:
                problems.append(_bad_lot_message(token) + " (in the claim)")
            else:
                problems.append(f'could not understand "{token}" after "{marker}": a claim names '
                                f"one lot, e.g. claim C4")
        elif not lots:
            problems.append(f'"{marker}" must be followed by the lot of the tower to claim, '
                            f"e.g. claim C4")
        else:
            problems.append(f"a move claims at most one tower, not {len(lots)} ({' '.join(lots)})")

    if problems:
        raise Unparsed(problems[0], partial)
    missing = [name for name, value in (("kind (tower or dome)", partial.kind),
                                        ("colour (red, blue, green, black)", partial.colour),
                                        ("lot to build on (A1-H10)", partial.lot)) if value is None]
    if missing:
        raise Unparsed(f"{text.strip()!r} gives no {' and no '.join(missing)}", partial)
    assert partial.kind is not None and partial.colour is not None and partial.lot is not None
    if (partial.kind, partial.colour) not in PIECE_INDEX:
        raise Unparsed("there are no black towers: towers are red, blue or green "
                       "(black is a dome colour)", Partial(None, None, partial.lot, partial.claim))
    move = BUILD_MOVES[PIECE_INDEX[(partial.kind, partial.colour)]][partial.lot]
    return move.with_claim(partial.claim) if partial.claim else move


def rank(candidates: list[Move], partial: Partial, limit: int = 5) -> list[Move]:
    """The candidates nearest to what was understood: same lot with another piece, or the same
    piece on nearby lots, before anything else."""
    def key(item: tuple[int, Move]) -> tuple[int, int, int]:
        order, move = item
        misses = (partial.kind is not None and move.kind != partial.kind) + (
            partial.colour is not None and move.colour != partial.colour)
        distance = 0
        if partial.lot is not None:
            distance = grid_distance(move.lot_index, partial.lot)
            misses += distance > 0
        return misses, distance, order

    ranked = sorted(enumerate(candidates), key=key)
    return [move for _, move in ranked[:limit]]
