"""The board for mail: plain ASCII (at most 72 columns), an HTML table, and the legal-move listing;
``AlienCityRenderer`` (``AlienCity.renderer``) draws them, and hands the archive's SVG board to ``svg``.

The text board must survive any mail client, so it is pure ASCII, uses a fixed-width grid with tile
boundaries drawn in, and explains its own abbreviations in a legend.
"""

from __future__ import annotations

import html
import textwrap
from collections.abc import Callable
from typing import TYPE_CHECKING

from engine.alien_city.board import (
    COLOURS,
    COLUMNS,
    LOT_INDEX,
    LOT_NAMES,
    N_LOTS,
    N_ROWS,
    PIECES,
    SEATS,
    lot_index,
)
from engine.alien_city.html_board import board_html, html_legend
from engine.alien_city.moves import BUILD_MOVES, BUILD_TEXTS
from engine.alien_city.notation import local_move, local_piece, seat_name, words
from engine.alien_city.svg import svg_board, svg_defs, svg_legend
from engine.base import Renderer
from engine.i18n import _, ngettext

if TYPE_CHECKING:
    from engine.alien_city.state import AlienCityState

WIDTH = 72
_LETTER = {"red": "R", "blue": "B", "green": "G", "black": "K"}
_CAP = {"black": "b", "white": "w", None: " "}


def _title(state: AlienCityState) -> str:
    opts = state.options
    parts = [_("edition {edition}").format(edition=opts["edition"])]
    if opts.get("symmetric"):
        parts.append(_("symmetric start"))
    if opts.get("location_bonus"):
        parts.append(_("location bonus"))
    return f"Alien City ({', '.join(parts)})"


# A lot's six columns are its tile's colour letter, the icon mark, a space, then what stands there
# (``_BODY[cell][cap cell]``: "." for an empty street, else kind, colour and the cap).
_TILE_LETTER = tuple(_LETTER[c].lower() for c in COLOURS)
_CAP_CELL = (_CAP[None], *(_CAP[seat] for seat in SEATS))
_BODY = ((".  ",) * 3, *(tuple(("T" if kind == "tower" else "D") + _LETTER[colour] + cap for cap in _CAP_CELL)
                         for kind, colour in PIECES))
# Lots of a board row from west to east, in pairs: (west, east) for each of the four tiles.
_ROW_PAIRS = {row: tuple((lot_index(2 * tx, row), lot_index(2 * tx + 1, row)) for tx in range(4))
              for row in range(1, N_ROWS + 1)}


def _border(state: AlienCityState, ty: int | None, w: dict[str, str]) -> str:
    """A horizontal tile boundary, labelled with the tiles of tile row ``ty`` (below it)."""
    out = "   +"
    for tx in range(4):
        if ty is None:
            out += "-" * 15 + "+"
            continue
        tile = state.layout.tiles[4 * ty + tx]
        label = f"- {w[tile.colour]} {tile.number} "
        out += label + "-" * (15 - len(label)) + "+"
    return out


def _column_header() -> str:
    chars = [" "] * 68
    for column in range(8):
        tx, half = divmod(column, 2)
        chars[4 + 16 * tx + 1 + 7 * half + 2] = COLUMNS[column]
    return "".join(chars).rstrip()


_COLUMN_HEADER = _column_header()


def _board_lines(cells: list[str], border: Callable[[int | None], str]) -> list[str]:
    """The board's lines, from each lot's six columns (by lot index) and the tile boundaries."""
    lines = [_COLUMN_HEADER]
    for row in range(N_ROWS, 0, -1):
        if row % 2 == 0:
            lines.append(border((row - 1) // 2))
        pairs = "".join(f" {cells[west]} {cells[east]} |" for west, east in _ROW_PAIRS[row])
        lines.append(f"{row:>2} |{pairs} {row}")
    lines.append(border(None))
    lines.append(_COLUMN_HEADER)
    return lines


def _lot_places() -> dict[int, tuple[int, int]]:
    """Where each lot's six columns stand on the board, as (line, column): the lot of the last build
    is framed by the column before them and the one after."""
    lines = _board_lines([f"<{lot:04d}>" for lot in range(N_LOTS)], lambda ty: "")
    return {lot: (number, line.index(f"<{lot:04d}>")) for number, line in enumerate(lines)
            for lot in range(N_LOTS) if f"<{lot:04d}>" in line}


_LOT_PLACE = _lot_places()


def _board_template(state: AlienCityState) -> str:
    """The board with a ``str.format`` field for what stands on each lot (``{lot index}``): the
    tiles, their letters and labels and the icon marks change with no move, so they are written
    once per game (and language)."""
    layout = state.layout
    w = words()
    cells = [f"{_TILE_LETTER[layout.lot_colour[lot]]}{'*' if layout.is_icon[lot] else ' '} {{{lot}}}"
             for lot in range(N_LOTS)]
    lines = _board_lines(cells, lambda ty: _border(state, ty, w).replace("{", "{{").replace("}", "}}"))
    return "\n".join(lines)


def board_lines(state: AlienCityState) -> list[str]:
    """The board, a lot in 6 columns; the lot of the last build in brackets. What stands on the
    lots is put into the game's board template (``_board_template``): a move's mail draws only
    that, not the 80 lots and the tile boundaries."""
    board, cap = state.cells()
    template = state.setup_drawing(("text board",), lambda: _board_template(state))
    lines = template.format(*[_BODY[b][c] for b, c in zip(board, cap, strict=True)]).split("\n")
    built, _claim = state.last_move_lots()
    if built is not None:
        line, column = _LOT_PLACE[LOT_INDEX[built]]
        text = lines[line]
        lines[line] = f"{text[:column - 1]}[{text[column:column + 6]}]{text[column + 7:]}"
    return lines


def supply_lines(state: AlienCityState) -> list[str]:
    lines = []
    w = words()
    width = max(6, *(len(seat_name(seat)) for seat in SEATS))
    for seat in SEATS:
        held = state.supply(seat)
        towers = "  ".join(f"{w[c]} {held['tower ' + c]}" for c in ("red", "blue", "green"))
        domes = "  ".join(f"{w[c]} {held['dome ' + c]}" for c in ("red", "blue", "green", "black"))
        lines.append(_("{seat} towers: {towers}    caps left: {caps}").format(
            seat=f"{seat_name(seat):<{width}}", towers=towers, caps=state.caps_left(seat)))
        lines.append(_("{seat} domes:  {domes}").format(seat=" " * width, domes=domes))
    return lines


def _handicap_line(state: AlienCityState) -> str | None:
    parts = []
    for seat in SEATS:
        h = state.options["handicap"][seat]
        bits = []
        if h["reach"] != 2:
            bits.append(_("customers within {reach}").format(reach=h["reach"]))
        if h["extra_claims"]:
            bits.append(ngettext("{n} extra cap", "{n} extra caps", h["extra_claims"]).format(
                n=h["extra_claims"]))
        if bits:
            parts.append(f"{seat_name(seat)} {_(' and ').join(bits)}")
    return _("Handicap: {parts}.").format(parts="; ".join(parts)) if parts else None


def dice_lines(state: AlienCityState) -> list[str]:
    """Edition 1.2's roll for the first move, as the server reports it."""
    if not state.dice:
        return []
    lines = []
    for number, rolls in enumerate(state.dice, 1):
        text = ", ".join(f"{seat_name(seat)} {' '.join(str(f) for f in rolls[seat])} = {sum(rolls[seat])}"
                         for seat in SEATS)
        lines.append(_("Dice round {number}: {rolls}").format(number=number, rolls=text))
    lines.append(_("{seat} rolled highest and moves first.").format(seat=seat_name(state.first)))
    return lines


def _status_lines(state: AlienCityState, viewer: str | None, ended: bool) -> list[str]:
    lines = []
    if ended and not state.is_over:  # resigned, lost on time, agreed: nobody is to move
        lines.append(ngettext("Game over after {n} move.", "Game over after {n} moves.",
                              state.ply).format(n=state.ply))
    elif state.is_over:
        # English said "1 moves" from the start; the plural forms serve the other languages.
        lines.append(ngettext("Game over after {n} moves: neither seat can build.",
                              "Game over after {n} moves: neither seat can build.",
                              state.ply).format(n=state.ply))
    else:
        assert state.to_move is not None
        you = _(" (you)") if viewer == state.to_move else ""
        lines.append(_("To move: {seat}{you}, move {number}.").format(
            seat=seat_name(state.to_move), you=you, number=state.ply + 1))
    last = state.history()[-1:] if state.last_move else []
    lines.append(_("Last move: {move} (in [ ] on the board)").format(
        move=f"{seat_name(last[0][0])}: {local_move(state.parse_move(last[0][1]))}")
                 if last else _("No moves yet."))
    return lines


def wrap_words(text: str, width: int, indent: str, break_on_hyphens: bool = True) -> list[str]:
    """``textwrap.wrap(text, width, subsequent_indent=indent, break_on_hyphens=...)``, the same
    lines, without its regular expressions, for the common case of a legal listing: words joined
    by single spaces, no word too long for a line, and no hyphen where textwrap may break a word
    at one. Each line is one ``rfind`` for its last space, not a step per word (the listing of an
    early position has some 400 words). Anything else goes to textwrap."""
    if (not text or ("-" in text and break_on_hyphens) or "  " in text or text[0] == " " or text[-1] == " "
            or not text.isprintable()):  # tabs, line ends: textwrap makes them spaces
        return textwrap.wrap(text, width, subsequent_indent=indent, break_on_hyphens=break_on_hyphens)
    lines: list[str] = []
    start, room = 0, width  # the first line has no indent
    while len(text) - start > room:
        end = text.rfind(" ", start, start + room + 1)
        if end <= start:  # a word longer than the line: textwrap breaks it
            return textwrap.wrap(text, width, subsequent_indent=indent, break_on_hyphens=break_on_hyphens)
        lines.append(indent + text[start:end] if lines else text[start:end])
        start, room = end + 1, width - len(indent)
    lines.append(indent + text[start:] if lines else text[start:])
    return lines


def _wrap(line: str) -> str:
    """A line of more than ``WIDTH`` columns, wrapped."""
    return "\n".join(wrap_words(line, WIDTH, "  ", break_on_hyphens=False))


#: Stands for a space where a line must not break (a move the reader copies), until the wrapping is
#: done: not a space to ``textwrap``, which breaks only at ASCII whitespace.
_GLUE = "\x00"


# One piece's legal builds: kind, colour, the lots (a star marks a build that ends the game) and the
# canonical move texts, in the order of ``legal_moves``.
BuildGroup = tuple[str, str, tuple[str, ...], tuple[str, ...]]


def _build_groups(state: AlienCityState) -> tuple[BuildGroup, ...]:
    ending = state.ending_set()
    groups = []
    for piece, legal in state.legal_lots():
        kind, colour = PIECES[piece]
        if ending:
            builds = BUILD_MOVES[piece]
            lots = [LOT_NAMES[i] + "*" if builds[i] in ending else LOT_NAMES[i] for i in legal]
        else:
            lots = [LOT_NAMES[i] for i in legal]
        texts = BUILD_TEXTS[piece]
        groups.append((kind, colour, tuple(lots), tuple([texts[i] for i in legal])))
    return tuple(groups)


class AlienCityRenderer(Renderer["AlienCityState"]):
    """Alien City's drawings: the mail board (text and HTML), the legal-move listing, and
    the archive's SVG (``svg``)."""

    # Each drawing is made once per position, viewer and language (``AlienCityState.drawing``): the
    # mails about a move show the same board to several readers, and the next move's mail shows the
    # position again (with a copy of the state) when it reports what was wrong with a move.
    def text(self, state: AlienCityState, viewer: str | None, *, ended: bool = False) -> str:
        return state.drawing(("text", viewer, ended), lambda: self._text(state, viewer, ended))

    def html(self, state: AlienCityState, viewer: str | None, *, ended: bool = False) -> str:
        return state.drawing(("html", viewer, ended), lambda: self._html(state, viewer, ended))

    def legal(self, state: AlienCityState, viewer: str | None) -> str:
        return state.drawing(("legal", viewer), lambda: self._legal(state, viewer))

    def legal_groups(self, state: AlienCityState, viewer: str | None
                     ) -> list[tuple[str, list[tuple[str, str]]]]:
        """As the text listing groups them ("red tower: A2 A3 ..."; a star marks a build that ends
        the game)."""
        groups = state.drawing(("groups",), lambda: self._legal_groups(state))
        return [(label, list(items)) for label, items in groups]  # the caller's to change

    # The text and the HTML board of a mail say the same supplies and status lines.
    def _supply(self, state: AlienCityState) -> tuple[str, ...]:
        return state.drawing(("supply",), lambda: tuple(supply_lines(state)))

    def _status(self, state: AlienCityState, viewer: str | None, ended: bool) -> tuple[str, ...]:
        return state.drawing(("status", viewer, ended), lambda: tuple(_status_lines(state, viewer, ended)))

    def _text(self, state: AlienCityState, viewer: str | None, ended: bool) -> str:
        lines = [_title(state)]
        if viewer in SEATS:
            lines.append(_("You play {seat}.").format(seat=seat_name(viewer)))
        lines.append("")
        lines += board_lines(state)
        lines += [
            "",
            *_("Each lot: tile colour (r red, b blue, g green, k black), * = icon\n"
               "lot, then the structure: T tower / D dome, colour R B G K, and\n"
               "cap b (black's) or w (white's); . = empty street.\n"
               "Tile labels on the boundaries give each tile's colour and number.").split("\n"),
            "",
        ]
        lines += self._supply(state)
        handicap = _handicap_line(state)
        if handicap:
            lines.append(handicap)
        if state.ply == 0:
            lines += dice_lines(state)
        lines.append("")
        lines += self._status(state, viewer, ended)
        return "\n".join([line if len(line) <= WIDTH else _wrap(line) for line in lines])

    def _html(self, state: AlienCityState, viewer: str | None, ended: bool) -> str:
        esc = html.escape
        out = [f'<div class="alien-city"><p><b>{esc(_title(state))}</b></p>', board_html(state),
               html_legend(), "<pre style=font-size:11px>" + esc("\n".join(self._supply(state))) + "</pre>"]
        extra = []
        handicap = _handicap_line(state)
        if handicap:
            extra.append(handicap)
        if state.ply == 0:
            extra += dice_lines(state)
        extra += self._status(state, viewer, ended)
        out.append("<p>" + "<br/>".join(esc(line) for line in extra) + "</p></div>")
        return "\n".join(out)

    def _legal(self, state: AlienCityState, viewer: str | None) -> str:
        if state.is_over:
            return _("The game is over: neither seat has a legal build. See the score.")
        seat = state.to_move
        assert seat is not None
        ending = state.ending_set()
        builds = self._build_groups(state)
        who = seat_name(seat)
        lines = [_("Legal builds for {seat}{you}, move {number}:").format(
            seat=who, you=_(" (you)") if viewer == seat else "", number=state.ply + 1)]
        for kind, colour, lots, _texts in builds:
            label = local_piece(kind, colour)
            if kind == "dome" and state.dome_fallback(colour):
                label += _(" (no {colour}-tile lot is free: anywhere)").format(colour=words()[colour])
            lines += wrap_words(f"{label}: {' '.join(lots)}", WIDTH, "    ")
        caps = state.caps_left(seat)
        if ending:
            lines.append(_("* ends the game: no claim may go with that build.") if caps
                         else _("* ends the game."))
        # Claim hints only when a claim is possible at all: never "may be claimed" to a seat
        # without caps, or when every build ends the game.
        if caps == 0:
            lines.append(_("{seat} has no caps left: no claim is possible this turn.").format(seat=who))
        elif len(ending) == sum(len(lots) for _kind, _colour, lots, _texts in builds):
            lines.append(_("Every build ends the game: no claim is possible this turn."))
        elif not state.can_claim():
            lines.append(_("No tower can be claimed: no claim is possible this turn."))
        else:
            targets = state.claimable_towers()
            tower_builds = state.open_build(towers_only=True) is not None
            if targets:
                lines += wrap_words(_("Towers that may be claimed: {lots}").format(lots=" ".join(targets))
                                    + (_(" (or the tower you build)") if tower_builds else ""),
                                    WIDTH, "    ")
            else:
                lines.append(_("The tower you build may be claimed."))
            example = state.open_build(towers_only=not targets)
            assert example is not None  # state.can_claim() said so
            target = targets[0] if targets else example.lot
            move = local_move(example.with_claim(target)).replace(" ", _GLUE)  # copied from one line
            lines.append(ngettext('A claim is possible this turn ({seat} has {n} cap left), e.g. "{move}".',
                                  'A claim is possible this turn ({seat} has {n} caps left), e.g. "{move}".',
                                  caps).format(seat=who, n=caps, move=move))
        text = "\n".join([line if len(line) <= WIDTH else _wrap(line) for line in lines])
        return text.replace(_GLUE, " ")

    def _legal_groups(self, state: AlienCityState) -> list[tuple[str, list[tuple[str, str]]]]:
        if state.is_over:
            return []
        return [(local_piece(kind, colour), list(zip(lots, texts, strict=True)))
                for kind, colour, lots, texts in self._build_groups(state)]

    def _build_groups(self, state: AlienCityState) -> tuple[BuildGroup, ...]:
        """The legal builds by piece, for the listing and its one-tap links: drawn once per
        position, since both show them."""
        return state.drawing(("builds",), lambda: _build_groups(state))

    def svg_defs(self, state: AlienCityState, prefix: str) -> str:
        return svg_defs(state, prefix)

    def svg_board(self, state: AlienCityState, prefix: str, label: str) -> str:
        return svg_board(state, prefix, label)

    def svg_legend(self, state: AlienCityState, prefix: str) -> str:
        return svg_legend(state, prefix)


__all__ = ["AlienCityRenderer", "board_lines", "dice_lines", "supply_lines"]
