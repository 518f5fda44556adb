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
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from engine.alien_city.board import (
    COLUMNS,
    LOT_INDEX,
    N_COLUMNS,
    N_ROWS,
    PIECE_INDEX,
    Layout,
    grid_distance,
    lot_index,
    tile_span,
)
from engine.alien_city.moves import BUILD_MOVES, Move
from engine.i18n import _, language, pgettext

# The words of every language are read whatever the reader's language (a German may quote an
# English move, and English always works); keys are folded by ``fold``: lower case, no diacritics.
KIND_WORDS = {"tower": "tower", "towers": "tower", "t": "tower",
              "dome": "dome", "domes": "dome", "d": "dome",
              # German (rule book 002): Turm, Kuppel
              "turm": "tower", "turme": "tower", "tuerme": "tower", "kuppel": "dome", "kuppeln": "dome",
              # Slovak (rule book 003): veža, kupola
              "veza": "tower", "veze": "tower", "vezu": "tower", "vezi": "tower",
              "kupola": "dome", "kupolu": "dome", "kupoly": "dome", "kupole": "dome", "kupol": "dome"}
COLOUR_WORDS = {"red": "red", "r": "red", "blue": "blue", "b": "blue", "green": "green", "g": "green",
                "black": "black", "k": "black",
                **{w: "red" for w in ("rot", "rote", "roter", "roten", "rotes")},
                **{w: "blue" for w in ("blau", "blaue", "blauer", "blauen", "blaues")},
                **{w: "green" for w in ("grun", "gruen", "grune", "gruene", "gruner", "gruener",
                                        "grunen", "gruenen", "grunes", "gruenes")},
                **{w: "black" for w in ("schwarz", "schwarze", "schwarzer", "schwarzen", "schwarzes")},
                **{w: "red" for w in ("cervena", "cervenu", "cerveny", "cervene")},
                **{w: "blue" for w in ("modra", "modru", "modry", "modre")},
                **{w: "green" for w in ("zelena", "zelenu", "zeleny", "zelene")},
                **{w: "black" for w in ("cierna", "ciernu", "cierny", "cierne")}}
CLAIM_WORDS = ("claim", "claims", "+", "(",
               "deckel", "besetze", "besetzen",
               "obsad", "obsadit", "obsadte", "klobucik")
_CODE_KIND = {"t": "tower", "d": "dome"}
_CODE_COLOUR = {"r": "red", "b": "blue", "g": "green", "k": "black"}
# German letter codes (Turm/Kuppel, rot/blau/gruen/schwarz): no pair means another piece in English.
_CODE_KIND_DE = {"t": "tower", "k": "dome"}
_CODE_COLOUR_DE = {"r": "red", "b": "blue", "g": "green", "s": "black"}
_LOT_RE = re.compile(r"^[a-h](?:10|[1-9])$")
_LOTLIKE_RE = re.compile(r"^([a-z])(\d+)$")
_GLUED_RE = re.compile(r"^([tdrbgks]{2})([a-h](?:10|[1-9]))$")

# How a move is written in each language: (kind, colour) words and the claim word. Parsing reads them
# all (see the tables above); rendering writes the reader's language, so what a player copies parses.
WORDS = {
    "en": {"tower": "tower", "dome": "dome", "red": "red", "blue": "blue", "green": "green",
           "black": "black", "claim": "claim"},
    "de": {"tower": "Turm", "dome": "Kuppel", "red": "rot", "blue": "blau", "green": "grün",
           "black": "schwarz", "claim": "Deckel"},
    "sk": {"tower": "veža", "dome": "kupola", "red": "červená", "blue": "modrá", "green": "zelená",
           "black": "čierna", "claim": "obsaď"},
}


def words() -> dict[str, str]:
    """The notation words of the active language (English when it has none)."""
    return WORDS.get(language(), WORDS["en"])


def _vocabulary() -> tuple[str, ...]:
    """Words a misspelling is compared with: English and the reader's own."""
    return tuple(dict.fromkeys(fold(w) for table in (WORDS["en"], words()) for w in table.values()))


def fold(word: str) -> str:
    """Lower case without diacritics (``Grün`` -> ``grun``, ``veža`` -> ``veza``)."""
    decomposed = unicodedata.normalize("NFKD", word.lower().replace("ß", "ss"))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def local_move(move: Move) -> str:
    """The move in the reader's words (``Turm rot C4 Deckel C5``); it parses in any language."""
    w = words()
    text = f"{w[move.kind]} {w[move.colour]} {move.lot}"
    if move.claim is not None:
        text += f" {w['claim']} {move.claim}"
    return text


def local_piece(kind: str, colour: str) -> str:
    """A piece as the legal list heads its group: ``red tower`` / ``Turm rot``."""
    w = words()
    return f"{w[colour]} {w[kind]}" if language() == "en" else f"{w[kind]} {w[colour]}"


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


#: What the legal listing prints around the moves, read as written: the star after a build that
#: ends the game ("D5*"), the colon after a piece's label ("red tower: D5") and the quotes around
#: the example of a claim.
_DECORATION = re.compile(r"[*:\"“”„«»]")


def _tokens(text: str) -> list[str]:
    s = _DECORATION.sub(" ", text).strip()
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
    for kinds, colours in ((_CODE_KIND, _CODE_COLOUR), (_CODE_KIND_DE, _CODE_COLOUR_DE)):
        if a in kinds and b in colours:
            return kinds[a], colours[b]
        if b in kinds and a in colours:
            return kinds[b], colours[a]
    return None


def _nearest_lot(column_letter: str, row: int) -> int:
    column = min(max(ord(column_letter) - ord("a"), 0), N_COLUMNS - 1)
    return lot_index(column, min(max(row, 1), N_ROWS))


def _bad_lot_message(token: str) -> str:
    return _('"{token}" is not a lot: columns are {first}-{last} and rows 1-{rows} (e.g. C4)').format(
        token=token, first=COLUMNS[0], last=COLUMNS[-1], rows=N_ROWS)


@lru_cache(maxsize=4096)
def parse(text: str) -> Move:
    """Parse a move text; raise :class:`Unparsed` naming the first token not understood.

    Remembered by text: a move is read several times while one mail is answered (applied, named
    in the reader's words, shown as the last move), and the same few hundred texts recur in every
    game. A move that parses parses the same in every language and is immutable; a text that
    does not raises, which is not remembered, so each reader gets the message in their language."""
    partial = Partial()
    raw = _tokens(text)
    if not raw:
        raise Unparsed(_('empty move: write e.g. "{example}" or "{example_claim}"').format(
            example=local_move(BUILD_MOVES[0][LOT_INDEX["C4"]]),
            example_claim=local_move(BUILD_MOVES[-1][LOT_INDEX["A1"]].with_claim("C4"))), partial)
    lowered = [fold(t) for t in raw]
    claim_at = next((i for i, t in enumerate(lowered) if t in CLAIM_WORDS), len(raw))
    problems: list[str] = []

    def set_kind(value: str, token: str) -> None:
        if partial.kind is not None and partial.kind != value:
            problems.append(_('"{token}" names a second kind of piece (already {kind})').format(
                token=token, kind=words()[partial.kind]))
        partial.kind = partial.kind or value

    def set_colour(value: str, token: str) -> None:
        if partial.colour is not None and partial.colour != value:
            problems.append(_('"{token}" names a second colour (already {colour})').format(
                token=token, colour=words()[partial.colour]))
        partial.colour = partial.colour or value

    def set_lot(value: int, token: str) -> None:
        if partial.lot is not None:
            problems.append(_('"{token}" names a second lot to build on; put a claim after "{claim}"')
                            .format(token=token, claim=words()["claim"]))
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
            near = difflib.get_close_matches(low, _vocabulary(), n=1, cutoff=0.6)
            w = words()
            hint = ""
            if near:
                if near[0] in KIND_WORDS and partial.kind is None:
                    partial.kind = KIND_WORDS[near[0]]
                elif near[0] in COLOUR_WORDS and partial.colour is None:
                    partial.colour = COLOUR_WORDS[near[0]]
                meant = KIND_WORDS.get(near[0]) or COLOUR_WORDS.get(near[0]) or "claim"
                hint = _(' (did you mean "{word}"?)').format(
                    word=w[meant] if fold(w[meant]) == near[0] else WORDS["en"][meant])
            problems.append(_('could not understand "{token}"{hint}: expected a kind ({tower}, {dome}), '
                              "a colour ({red}, {blue}, {green}, {black}), a lot (A1-H10) or a claim")
                            .format(token=token, hint=hint, **w))

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
                problems.append(_bad_lot_message(token) + _(" (in the claim)"))
            else:
                problems.append(_('could not understand "{token}" after "{marker}": a claim names '
                                  "one lot, e.g. {claim} C4").format(token=token, marker=marker,
                                                                     claim=words()["claim"]))
        elif not lots:
            problems.append(_('"{marker}" must be followed by the lot of the tower to claim, '
                              "e.g. {claim} C4").format(marker=marker, claim=words()["claim"]))
        else:
            problems.append(_("a move claims at most one tower, not {count} ({lots})").format(
                count=len(lots), lots=" ".join(lots)))

    if problems:
        raise Unparsed(problems[0], partial)
    w = words()
    missing = [name for name, value in (
        (_("kind ({tower} or {dome})").format(**w), partial.kind),
        (_("colour ({red}, {blue}, {green}, {black})").format(**w), partial.colour),
        (_("lot to build on (A1-H10)"), partial.lot)) if value is None]
    if missing:
        raise Unparsed(_("{text} gives no {missing}").format(
            text=repr(text.strip()), missing=_(" and no ").join(missing)), partial)
    assert partial.kind is not None and partial.colour is not None and partial.lot is not None
    if (partial.kind, partial.colour) not in PIECE_INDEX:
        raise Unparsed(_("there are no black towers: towers are red, blue or green "
                         "(black is a dome colour)"), Partial(None, None, partial.lot, partial.claim))
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


def seat_name(seat: str) -> str:
    """A seat as readers call it: ``black`` / ``Schwarz`` / ``čierny`` (the seat, not the colour)."""
    names = {"black": pgettext("seat", "black"), "white": pgettext("seat", "white")}
    return names.get(seat, seat)


def tile_label(colour: str, number: int) -> str:
    """``red tile 3``: a tile as the archive's board names it."""
    return _("{colour} tile {number}").format(colour=words()[colour], number=number)


def icon_label(lot: str, colour: str, number: int) -> str:
    return _("{lot}: icon lot of the {colour} {number}").format(lot=lot, colour=words()[colour],
                                                                number=number)


def tile_name(layout: Layout, tile: int) -> str:
    """``the red 3 tile (C3-D4)``: a tile as messages name it (``Layout.tile_name`` in English)."""
    t = layout.tiles[tile]
    return _("the {colour} {number} tile ({span})").format(colour=words()[t.colour], number=t.number,
                                                          span=tile_span(tile))
