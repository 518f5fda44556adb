"""The board for mail: plain ASCII (at most 72 columns), an HTML table, and the legal-move listing;
``AlienCityRenderer`` (``AlienCity.renderer``) draws them, and hands the archive's SVG board to ``svg``.

The text board must survive any mail client, so it is pure ASCII, uses a fixed-width grid with tile
boundaries drawn in, and explains its own abbreviations in a legend.
"""

from __future__ import annotations

import html
import textwrap
from typing import TYPE_CHECKING

from engine.alien_city.board import (
    COLUMNS,
    LOT_NAMES,
    N_ROWS,
    PIECES,
    SEATS,
    TILE_OF,
    lot_index,
)
from engine.alien_city.moves import format_move
from engine.alien_city.svg import svg_board, svg_defs
from engine.base import Renderer

if TYPE_CHECKING:
    from engine.alien_city.state import AlienCityState, Structure

WIDTH = 72
_LETTER = {"red": "R", "blue": "B", "green": "G", "black": "K"}
_CAP = {"black": "b", "white": "w", None: " "}
_TILE_BG = {"red": "#f4c7c3", "blue": "#c9daf8", "green": "#d9ead3", "black": "#b7b7b7"}
_PIECE_FG = {"red": "#cc0000", "blue": "#1155cc", "green": "#38761d", "black": "#000000"}


def _title(state: AlienCityState) -> str:
    opts = state.options
    parts = [f"edition {opts['edition']}"]
    if opts.get("symmetric"):
        parts.append("symmetric start")
    if opts.get("location_bonus"):
        parts.append("location bonus")
    return f"Alien City ({', '.join(parts)})"


def _cell(state: AlienCityState, lot: int, structures: dict[str, Structure]) -> str:
    tile = state.layout.tiles[TILE_OF[lot]]
    mark = "*" if state.layout.is_icon[lot] else " "
    s = structures.get(LOT_NAMES[lot])
    if s is None:
        body = ".  "
    else:
        body = ("T" if s.kind == "tower" else "D") + _LETTER[s.colour] + _CAP[s.claimed_by]
    return f"{_LETTER[tile.colour].lower()}{mark} {body}"


def _border(state: AlienCityState, ty: int | None) -> str:
    """A horizontal tile boundary, labelled with the tiles of tile row ``ty`` (below it)."""
    out = "   +"
    for tx in range(4):
        if ty is None:
            out += "-" * 15 + "+"
            continue
        tile = state.layout.tiles[4 * ty + tx]
        label = f"- {tile.colour} {tile.number} "
        out += label + "-" * (15 - len(label)) + "+"
    return out


def _column_header() -> str:
    chars = [" "] * 68
    for column in range(8):
        tx, half = divmod(column, 2)
        chars[4 + 16 * tx + 1 + 7 * half + 2] = COLUMNS[column]
    return "".join(chars).rstrip()


def board_lines(state: AlienCityState) -> list[str]:
    structures = state.structures()
    lines = [_column_header()]
    for row in range(N_ROWS, 0, -1):
        if row % 2 == 0:
            lines.append(_border(state, (row - 1) // 2))
        text = f"{row:>2} |"
        for tx in range(4):
            a = _cell(state, lot_index(2 * tx, row), structures)
            b = _cell(state, lot_index(2 * tx + 1, row), structures)
            text += f" {a} {b} |"
        lines.append(f"{text} {row}")
    lines.append(_border(state, None))
    lines.append(_column_header())
    return lines


def supply_lines(state: AlienCityState) -> list[str]:
    lines = []
    for seat in SEATS:
        held = state.supply(seat)
        towers = "  ".join(f"{c} {held['tower ' + c]}" for c in ("red", "blue", "green"))
        domes = "  ".join(f"{c} {held['dome ' + c]}" for c in ("red", "blue", "green", "black"))
        lines.append(f"{seat:<6} towers: {towers}    caps left: {state.caps_left(seat)}")
        lines.append(f"{'':<6} domes:  {domes}")
    return lines


def _handicap_line(state: AlienCityState) -> str | None:
    parts = []
    for seat in SEATS:
        h = state.options["handicap"][seat]
        bits = []
        if h["reach"] != 2:
            bits.append(f"customers within {h['reach']}")
        if h["extra_claims"]:
            bits.append(f"{h['extra_claims']} extra cap{'s' if h['extra_claims'] > 1 else ''}")
        if bits:
            parts.append(f"{seat} {' and '.join(bits)}")
    return "Handicap: " + "; ".join(parts) + "." if parts else None


def dice_lines(state: AlienCityState) -> list[str]:
    """Edition 1.2's roll for the first move, as the server reports it."""
    if not state.dice:
        return []
    lines = []
    for number, rolls in enumerate(state.dice, 1):
        text = ", ".join(f"{seat} {' '.join(str(f) for f in rolls[seat])} = {sum(rolls[seat])}"
                         for seat in SEATS)
        lines.append(f"Dice round {number}: {text}")
    lines.append(f"{state.first} rolled highest and moves first.")
    return lines


def _status_lines(state: AlienCityState, viewer: str | None) -> list[str]:
    lines = []
    if state.is_over:
        lines.append(f"Game over after {state.ply} moves: neither seat can build.")
    else:
        you = " (you)" if viewer == state.to_move else ""
        lines.append(f"To move: {state.to_move}{you}, move {state.ply + 1}.")
    lines.append(f"Last move: {state.last_move}" if state.last_move else "No moves yet.")
    return lines


def _wrap(line: str) -> str:
    if len(line) <= WIDTH:
        return line
    return "\n".join(textwrap.wrap(line, WIDTH, subsequent_indent="  ", break_on_hyphens=False))


class AlienCityRenderer(Renderer["AlienCityState"]):
    """Alien City's drawings: the mail board (text and HTML), the legal-move listing, and
    the archive's SVG (``svg``)."""

    def text(self, state: AlienCityState, viewer: str | None) -> str:
        lines = [_title(state)]
        if viewer in SEATS:
            lines.append(f"You play {viewer}.")
        lines.append("")
        lines += board_lines(state)
        lines += [
            "",
            "Each lot: tile colour (r red, b blue, g green, k black), * = icon",
            "lot, then the structure: T tower / D dome, colour R B G K, and",
            "cap b (black's) or w (white's); . = empty street.",
            "Tile labels on the boundaries give each tile's colour and number.",
            "",
        ]
        lines += supply_lines(state)
        handicap = _handicap_line(state)
        if handicap:
            lines.append(handicap)
        if state.ply == 0:
            lines += dice_lines(state)
        lines.append("")
        lines += _status_lines(state, viewer)
        return "\n".join(_wrap(line) for line in lines)

    def html(self, state: AlienCityState, viewer: str | None) -> str:
        esc = html.escape
        structures = state.structures()
        out = [f'<div class="alien-city"><p><strong>{esc(_title(state))}</strong></p>',
               '<table style="border-collapse:collapse;font-family:monospace;text-align:center">']
        header = '<tr><th></th>' + "".join(f"<th>{c}</th>" for c in COLUMNS) + "<th></th></tr>"
        out.append(header)
        for row in range(N_ROWS, 0, -1):
            cells = [f"<th>{row}</th>"]
            for column in range(8):
                lot = lot_index(column, row)
                name = LOT_NAMES[lot]
                tile = state.layout.tiles[TILE_OF[lot]]
                thick, thin = "3px solid #333", "1px solid #999"
                style = (f"background:{_TILE_BG[tile.colour]};width:3.2em;height:2.4em;"
                         f"border-left:{thick if column % 2 == 0 else thin};"
                         f"border-right:{thick if column % 2 == 1 else thin};"
                         f"border-top:{thick if row % 2 == 0 else thin};"
                         f"border-bottom:{thick if row % 2 == 1 else thin}")
                icon = state.layout.is_icon[lot]
                about = f"{name}: {tile.colour} tile {tile.number}" + (", icon lot" if icon else "")
                s = structures.get(name)
                body = (f'<span style="color:#555">&#9733;<small>{tile.number}</small></span>'
                        if icon else "")
                if s is not None:
                    about += f"; {s.colour} {s.kind}"
                    mark = "&#9650;" if s.kind == "tower" else "&#9679;"
                    body += f'<span style="color:{_PIECE_FG[s.colour]};font-size:1.3em">{mark}</span>'
                    if s.claimed_by:
                        about += f" claimed by {s.claimed_by}"
                        body += f"<sup>{esc(s.claimed_by[0].upper())}</sup>"
                cells.append(f'<td style="{style}" title="{esc(about)}">{body}</td>')
            cells.append(f"<th>{row}</th>")
            out.append("<tr>" + "".join(cells) + "</tr>")
        out.append(header)
        out.append("</table>")
        out.append("<p>&#9650; tower, &#9679; dome (in its colour); &#9733; icon lot with the "
                   "tile's number; <sup>B</sup>/<sup>W</sup> claimed by black/white.</p>")
        out.append("<pre>" + esc("\n".join(supply_lines(state))) + "</pre>")
        extra = []
        handicap = _handicap_line(state)
        if handicap:
            extra.append(handicap)
        if state.ply == 0:
            extra += dice_lines(state)
        extra += _status_lines(state, viewer)
        out += [f"<p>{esc(line)}</p>" for line in extra]
        out.append("</div>")
        return "\n".join(out)

    def legal(self, state: AlienCityState, viewer: str | None) -> str:
        if state.is_over:
            return "The game is over: neither seat has a legal build. See the score."
        seat = state.to_move
        assert seat is not None
        moves = state.legal_moves()
        ending = set(state.ending_moves())
        lines = [f"Legal builds for {seat}" + (" (you)" if viewer == seat else "")
                 + f", move {state.ply + 1}:"]
        groups: dict[tuple[str, str], list[str]] = {}
        for move in moves:
            groups.setdefault((move.kind, move.colour), []).append(
                move.lot + ("*" if move in ending else ""))
        for kind, colour in PIECES:
            lots = groups.get((kind, colour))
            if not lots:
                continue
            label = f"{colour} {kind}"
            if kind == "dome" and state.dome_fallback(colour):
                label += f" (no {colour}-tile lot is free: anywhere)"
            lines += textwrap.wrap(f"{label}: {' '.join(lots)}", WIDTH, subsequent_indent="    ")
        if ending:
            lines.append("* ends the game: no claim may go with that build.")
        targets = state.claimable_towers()
        tower_builds = any(m.kind == "tower" and m not in ending for m in moves)
        if targets:
            lines += textwrap.wrap("Towers that may be claimed: " + " ".join(targets)
                                   + (" (or the tower you build)" if tower_builds else ""),
                                   WIDTH, subsequent_indent="    ")
        caps = state.caps_left(seat)
        if caps == 0:
            lines.append(f"{seat} has no caps left: no claim is possible this turn.")
        elif len(ending) == len(moves):
            lines.append("Every build ends the game: no claim is possible this turn.")
        elif not state.can_claim():
            lines.append("No tower can be claimed: no claim is possible this turn.")
        else:
            example = next(m for m in moves if m not in ending and (targets or m.kind == "tower"))
            target = targets[0] if targets else example.lot
            lines.append(f"A claim is possible this turn ({seat} has {caps} cap"
                         f"{'s' if caps > 1 else ''} left), e.g. "
                         f"\"{format_move(example.with_claim(target))}\".")
        return "\n".join(_wrap(line) for line in lines)

    def svg_defs(self, state: AlienCityState, prefix: str) -> str:
        return svg_defs(state, prefix)

    def svg_board(self, state: AlienCityState, prefix: str, label: str) -> str:
        return svg_board(state, prefix, label)


__all__ = ["AlienCityRenderer", "board_lines", "dice_lines", "supply_lines"]
