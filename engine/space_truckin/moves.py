"""Moves and their notation.

Parsing here is purely textual; naming a segment by another of its edges is turned into the canonical
edge by the state, which knows the tile. Players type by mail, so the reader accepts case, stray
punctuation, missing spaces between a column and a row, and a few synonyms.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from engine.base import NotationError
from engine.i18n import _, language

from .geometry import parse_cell


@dataclass(frozen=True)
class Place:
    """Place the drawn space tile; ``ship`` is cargo / battleship / engineer, ``edge`` names its segment."""

    cell: str
    rotation: int
    ship: str | None = None
    edge: str | None = None


@dataclass(frozen=True)
class Remove:
    """Black hole (a): the cargo on the wormhole segment at ``cell``'s ``edge`` leaves the game."""

    cell: str
    edge: str


@dataclass(frozen=True)
class Swap:
    """Black hole (b): afterwards ``cell_a`` holds the tile that was at ``cell_b`` at ``rotation_a``,
    and ``cell_b`` the tile from ``cell_a`` at ``rotation_b``. Canonically ``cell_a < cell_b``."""

    cell_a: str
    rotation_a: int
    cell_b: str
    rotation_b: int

    def canonical(self) -> Swap:
        if self.cell_b < self.cell_a:
            return Swap(self.cell_b, self.rotation_b, self.cell_a, self.rotation_a)
        return self


@dataclass(frozen=True)
class Pass:
    """Black hole (c): nothing happens."""


Move = Place | Remove | Swap | Pass

SHIPS = ("cargo", "battleship", "engineer")
SHIP_SEGMENT = {"cargo": "wormhole", "battleship": "planet", "engineer": "station"}
SEGMENT_SHIP = {v: k for k, v in SHIP_SEGMENT.items()}

_VERBS = {
    "place": "place", "put": "place", "play": "place", "lay": "place", "p": "place", "pl": "place",
    "swap": "swap", "exchange": "swap", "switch": "swap", "sw": "swap",
    "remove": "remove", "rm": "remove", "rem": "remove", "del": "remove", "delete": "remove",
    "pass": "pass", "skip": "pass", "nothing": "pass", "none": "pass",
    # German and Slovak (docs/glossary.md), read in every language, diacritics folded
    "lege": "place", "legen": "place", "leg": "place", "poloz": "place", "polozit": "place",
    "tausche": "swap", "tauschen": "swap", "vymen": "swap", "vymenit": "swap",
    "entferne": "remove", "entfernen": "remove", "odstran": "remove", "odstranit": "remove",
    "passe": "pass", "passen": "pass", "pas": "pass", "pasujem": "pass",
}
_SHIP_WORDS = {
    "cargo": "cargo", "cargos": "cargo", "carg": "cargo", "car": "cargo", "c": "cargo",
    "freighter": "cargo", "wormhole": "cargo",
    "battleship": "battleship", "battleships": "battleship", "battle": "battleship", "bs": "battleship",
    "b": "battleship", "bat": "battleship", "planet": "battleship",
    "engineer": "engineer", "engineers": "engineer", "eng": "engineer", "crew": "engineer",
    "station": "engineer",
    "frachter": "cargo", "wurmloch": "cargo", "naklad": "cargo",
    "schlachtschiff": "battleship", "kriznik": "battleship", "planeta": "battleship",
    "ingenieur": "engineer", "ingenieure": "engineer", "inzinier": "engineer", "inzinieri": "engineer",
    "stanica": "engineer",
}
_EDGE_WORDS = {"n": "N", "north": "N", "e": "E", "east": "E", "s": "S", "south": "S",
               "w": "W", "west": "W",
               # German (O = Ost) and Slovak words; Slovak letters are not read (its S, sever, is
               # north, while S is south in English, which always works)
               "nord": "N", "norden": "N", "o": "E", "ost": "E", "osten": "E", "sud": "S", "sued": "S",
               "suden": "S", "sueden": "S", "westen": "W",
               "sever": "N", "vychod": "E", "juh": "S", "zapad": "W"}
_FILLER = {"rot", "rotation", "r", "deg", "degree", "degrees", "at", "on", "to", "with", "the",
           "edge", "side", "and", "ship", "by", "in", "tile", "cw", "segment", "a", "an",
           "drehung", "feld", "mit", "auf", "am", "kante", "schiff", "und", "plattchen",
           "otocenie", "na", "so", "pole", "hrana", "lod", "karticka"}
_ROTATIONS = {"0": 0, "00": 0, "000": 0, "90": 90, "180": 180, "270": 270, "360": 0}


# How each language writes a move (verbs and ships); edges stay N E S W everywhere.
WORDS = {
    "en": {"place": "place", "remove": "remove", "swap": "swap", "pass": "pass",
           "cargo": "cargo", "battleship": "battleship", "engineer": "engineer"},
    "de": {"place": "lege", "remove": "entferne", "swap": "tausche", "pass": "passe",
           "cargo": "Frachter", "battleship": "Schlachtschiff", "engineer": "Ingenieur"},
    "sk": {"place": "polož", "remove": "odstráň", "swap": "vymeň", "pass": "pas",
           "cargo": "náklad", "battleship": "krížnik", "engineer": "inžinier"},
}


def words() -> dict[str, str]:
    """The notation words of the active language (English when it has none)."""
    return WORDS.get(language(), WORDS["en"])


def local_move_text(move: Move) -> str:
    """The move in the reader's words (``lege E4 90 Frachter N``); it parses in any language."""
    w = words()
    english = move_text(move).split()
    return " ".join(w.get(word, word) for word in english)


def fold(text: str) -> str:
    """Lower case without diacritics, so that ``polož`` reads as ``poloz``."""
    decomposed = unicodedata.normalize("NFKD", text.lower().replace("ß", "ss"))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def move_text(move: Move) -> str:
    if isinstance(move, Place):
        text = f"place {move.cell} {move.rotation}"
        if move.ship == "engineer":
            return text + " engineer"
        if move.ship:
            return f"{text} {move.ship} {move.edge}"
        return text
    if isinstance(move, Remove):
        return f"remove {move.cell} {move.edge}"
    if isinstance(move, Swap):
        return f"swap {move.cell_a} {move.rotation_a} {move.cell_b} {move.rotation_b}"
    return "pass"


def tokenize(text: str) -> list[str]:
    """Words and numbers, with a column letter glued to a following row digit (``e 5`` -> ``E5``)."""
    raw = re.findall(r"[a-z]+|\d+", fold(text))
    out: list[str] = []
    i = 0
    while i < len(raw):
        tok = raw[i]
        nxt = raw[i + 1] if i + 1 < len(raw) else ""
        if len(tok) == 1 and tok in "abcdefghi" and len(nxt) == 1 and nxt in "123456789":
            out.append(tok.upper() + nxt)
            i += 2
            continue
        # "placee5" / "swape5": a verb run into a cell
        for verb in ("place", "swap", "remove"):
            if tok.startswith(verb) and len(tok) == len(verb) + 1 and tok[-1] in "abcdefghi" \
                    and len(nxt) == 1 and nxt in "123456789":
                out.extend([verb, tok[-1].upper() + nxt])
                i += 2
                break
        else:
            out.append(tok)
            i += 1
    return out


def _verbs() -> dict[str, str]:
    w = words()
    return {k: w[k] for k in ("place", "remove", "swap", "cargo", "battleship", "engineer")}


def _at_end(tokens: list[str]) -> str:
    return _("did not understand {words} at the end of the move.").format(words=repr(" ".join(tokens)))


def _is_cell(tok: str) -> bool:
    return len(tok) == 2 and parse_cell(tok) is not None


#: The black hole's choices are listed "(a) ...", "(b) ...", "(c) pass": the letter is no part of
#: the move copied from there.
_CHOICE_LETTER = re.compile(r"^\s*\(\s*[abc]\s*\)\s*", re.IGNORECASE)
#: The listing gives a cell's rotations together ("B3 0/90", a swap's "A1 0/90 C4 any").
_ROTATION_CHOICE = re.compile(r"(\d+)(?:\s*/\s*\d+)+")


def parse(text: str, suggest: Callable[[str], list[str]]) -> Move:
    """Read one move; ``suggest(partial)`` supplies legal alternatives for error messages. What
    the legal listing prints is read as written: a line that names one move parses, and one that
    offers a choice of rotations is answered with one of them."""
    text = _CHOICE_LETTER.sub("", text)
    tokens = [t for t in tokenize(text) if t not in _FILLER]
    anywhere = {"any", fold(_("any"))}
    if _ROTATION_CHOICE.search(text) or anywhere & set(tokens):
        one = parse(" ".join("0" if word in anywhere else word
                             for word in tokenize(_ROTATION_CHOICE.sub(r"\1", text))), suggest)
        raise NotationError(_("{text} offers a choice of rotations: write one of them, e.g. {example}.")
                            .format(text=repr(text.strip()), example=local_move_text(one)),
                            suggestions=suggest(" ".join(move_text(one).split()[:2])))
    if not tokens:
        w = words()
        raise NotationError(_("empty move: write e.g. '{place} E4 90', '{swap} E5 0 F6 270' or '{pass_}'.")
                            .format(place=w["place"], swap=w["swap"], pass_=w["pass"]),
                            suggestions=suggest(""))
    verb = _VERBS.get(tokens[0])
    if verb is None:
        if _is_cell(tokens[0]) and len(tokens) > 2 and _is_cell(tokens[2]):
            verb, rest = "swap", tokens  # "A1 90 C4 0", as the swaps are listed
        elif _is_cell(tokens[0]):
            verb, rest = "place", tokens
        else:
            raise NotationError(
                _("did not understand {token}: a move starts with {place}, {remove}, {swap} or {pass_}.")
                .format(token=repr(tokens[0]), pass_=words()["pass"], **_verbs()),
                suggestions=suggest(text))
    else:
        rest = tokens[1:]
    if verb == "pass":
        if rest:
            raise NotationError(_("'{pass_}' takes nothing after it, not {rest}.").format(
                pass_=words()["pass"], rest=repr(" ".join(rest))), suggestions=[words()["pass"]])
        return Pass()
    if verb == "place":
        return _parse_place(rest, text, suggest)
    if verb == "remove":
        return _parse_remove(rest, text, suggest)
    return _parse_swap(rest, text, suggest)


def _need_cell(tokens: list[str], what: str, text: str, suggest: Callable[[str], list[str]]) -> str:
    if not tokens or not _is_cell(tokens[0]):
        got = repr(tokens[0]) if tokens else _("nothing")
        raise NotationError(_("{what}: expected a cell A1..I9, got {got}.").format(what=what, got=got),
                            suggestions=suggest(text))
    return tokens.pop(0)


def _need_rotation(tokens: list[str], cell: str, text: str,
                   suggest: Callable[[str], list[str]]) -> int:
    if not tokens or tokens[0] not in _ROTATIONS:
        got = repr(tokens[0]) if tokens else _("nothing")
        raise NotationError(_("rotation after {cell}: expected 0, 90, 180 or 270, got {got}.").format(
                            cell=cell, got=got),
                            suggestions=suggest(cell))
    return _ROTATIONS[tokens.pop(0)]


def _parse_place(tokens: list[str], text: str, suggest: Callable[[str], list[str]]) -> Place:
    tokens = list(tokens)
    cell = _need_cell(tokens, words()["place"], text, suggest)
    rotation = _need_rotation(tokens, cell, text, suggest)
    if not tokens:
        return Place(cell, rotation)
    ship = _SHIP_WORDS.get(tokens[0])
    if ship is None:
        raise NotationError(
            _("did not understand {token} after '{place} {cell} {rotation}': expected a ship "
              "({cargo} EDGE, {battleship} EDGE or {engineer}) or nothing.").format(
                token=repr(tokens[0]), cell=cell, rotation=rotation, **_verbs()),
            suggestions=suggest(f"place {cell} {rotation}"))
    tokens.pop(0)
    edge = None
    if tokens:
        edge = _EDGE_WORDS.get(tokens[0])
        if edge is None:
            raise NotationError(
                _("did not understand {token} after {ship}: expected an edge N, E, S or W.").format(
                    token=repr(tokens[0]), ship=repr(words()[ship])),
                suggestions=suggest(f"place {cell} {rotation} {ship}"))
        tokens.pop(0)
    if tokens:
        raise NotationError(_at_end(tokens), suggestions=suggest(f"place {cell} {rotation} {ship}"))
    if ship == "engineer":
        edge = None
    return Place(cell, rotation, ship, edge)


def _parse_remove(tokens: list[str], text: str, suggest: Callable[[str], list[str]]) -> Remove:
    tokens = [t for t in tokens if _SHIP_WORDS.get(t) != "cargo"]
    cell = _need_cell(tokens, words()["remove"], text, suggest)
    if not tokens or tokens[0] not in _EDGE_WORDS:
        got = repr(tokens[0]) if tokens else _("nothing")
        raise NotationError(
            _("{remove} {cell}: expected the edge of the cargo's wormhole segment (N, E, S or W), "
              "got {got}.").format(remove=words()["remove"], cell=cell, got=got),
            suggestions=suggest(f"remove {cell}"))
    edge = _EDGE_WORDS[tokens.pop(0)]
    if tokens:
        raise NotationError(_at_end(tokens), suggestions=suggest(f"remove {cell} {edge}"))
    return Remove(cell, edge)


def _parse_swap(tokens: list[str], text: str, suggest: Callable[[str], list[str]]) -> Swap:
    tokens = list(tokens)
    a = _need_cell(tokens, _("{swap} (first cell)").format(swap=words()["swap"]), text, suggest)
    ra = _need_rotation(tokens, a, text, suggest)
    b = _need_cell(tokens, _("{swap} (second cell)").format(swap=words()["swap"]), text, suggest)
    rb = _need_rotation(tokens, b, text, suggest)
    if tokens:
        raise NotationError(_at_end(tokens), suggestions=suggest(f"swap {a} {ra} {b} {rb}"))
    return Swap(a, ra, b, rb).canonical()
