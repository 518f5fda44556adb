"""Alien City's speed shortcuts, each held equal to the plain way of getting the same answer.

The engine's CPU per move in the processor was cut by fast paths beside slower, simpler code: a
score whose text is written only when read, street analysis on bitboards, boards and listings
drawn without ``textwrap``. Each test here plays seeded random games (every edition and variant)
and compares the fast answer with the plain one on every position.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.alien_city import AlienCity, AlienCityState
from engine.alien_city.board import (
    COLOURS,
    COLUMNS,
    LOT_INDEX,
    N_LOTS,
    PIECES,
    SEATS,
    TILE_OF,
    lot_index,
)
from engine.alien_city.html_board import GLYPH, LAST, PIECE_FG, TILE_BG, board_html
from engine.alien_city.notation import words
from engine.alien_city.render import board_lines
from engine.alien_city.scoring import score_details, score_text
from engine.alien_city.streets import (
    analyse,
    analyse_by_tarjan,
    empty_bits,
    locally_simple,
    lots_of,
)
from engine.i18n import using
from pbem.i18n import translations

GAME = AlienCity()
DEFAULT_LAYOUT = GAME.start(GAME.normalize_options({}),
                            GAME.create_setup(GAME.normalize_options({}), random.Random(1))).layout
VARIANTS = ({"edition": "2.2"}, {"edition": "1.2", "location_bonus": True},
            {"edition": "2.2", "symmetric": True},
            {"edition": "1.2", "handicap": {"white": {"reach": 3, "extra_claims": 1}}})


def positions(games: int, seed: int = 0) -> Iterator[AlienCityState]:
    """Every position of ``games`` random games (random claims), as copies."""
    for number in range(games):
        rng = random.Random(seed + number)
        options = GAME.normalize_options(VARIANTS[number % len(VARIANTS)])
        state = GAME.start(options, GAME.create_setup(options, rng))
        yield state.copy()
        while not state.is_over:
            state.push(state.random_move(rng, claim_chance=0.7))
            yield state.copy()


@pytest.mark.parametrize("lang", ["en", "de", "sk"])
def test_a_score_text_written_when_read_is_the_text_of_its_position_and_language(lang) -> None:
    """The text is written later, in another language, after the state moved on: still the
    breakdown of the position and language it was asked for."""
    rng = random.Random(7)
    checked = 0
    for state in positions(8, seed=100):
        with using(translations(lang, "engine")):
            score = state.score()
            expected = score_text(score_details(*state.cells(), state.layout, state.options),
                                  state.options, state.is_over)
        if not state.is_over:
            state.push(state.random_move(rng))
        with using(translations("sk" if lang != "sk" else "de", "engine")):
            assert score.text == expected
        checked += 1
    assert checked > 100


def _same_streets(board: list[int], icons: int) -> None:
    fast, plain = analyse(board, icons), analyse_by_tarjan(board, icons)
    for name in ("empty", "n_empty", "critical", "articulation", "block", "street_ok", "buildable",
                 "connected", "empty_bits", "street_ok_bits", "buildable_bits"):
        assert getattr(fast, name) == getattr(plain, name), name
    empty = list(plain.empty)
    assert fast.simple == plain.simple == sum(
        1 << m for m in plain.street_ok if locally_simple(m, empty, -1))


def test_street_analysis_on_bitboards_equals_the_tarjan_pass_in_played_positions() -> None:
    seen = 0
    for state in positions(24, seed=300):
        board, _cap = state.cells()
        _same_streets(list(board), state.layout.icon_bits)
        seen += 1
    assert seen > 500


@settings(max_examples=400, deadline=None)
@given(st.lists(st.integers(0, 7), min_size=N_LOTS, max_size=N_LOTS),
       st.integers(0, (1 << N_LOTS) - 1))
def test_street_analysis_on_bitboards_equals_the_tarjan_pass_on_any_board(board, icons) -> None:
    """Boards no game reaches too: split street networks, walled-in structures, no empty lot."""
    _same_streets(board, icons)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, (1 << N_LOTS) - 1), st.integers(0, 2**32))
def test_street_analysis_on_bitboards_equals_the_tarjan_pass_on_sparse_and_full_boards(
        built, seed) -> None:
    """Mostly empty and mostly built boards, where the networks and their cuts are long."""
    rng = random.Random(seed)
    keep = rng.choice((0.1, 0.5, 0.9))
    board = [rng.randint(1, 7) if built >> i & 1 and rng.random() < keep else 0
             for i in range(N_LOTS)]
    _same_streets(board, DEFAULT_LAYOUT.icon_bits)


def test_lots_of_and_empty_bits_equal_their_loops() -> None:
    rng = random.Random(5)
    for _ in range(3000):
        bits = rng.getrandbits(N_LOTS) & rng.getrandbits(N_LOTS) if rng.random() < 0.5 else \
            rng.getrandbits(N_LOTS)
        assert lots_of(bits) == [i for i in range(N_LOTS) if bits >> i & 1]
        board = [rng.randint(0, 7) if bits >> i & 1 else 0 for i in range(N_LOTS)]
        assert empty_bits(board) == sum(1 << i for i in range(N_LOTS) if board[i] == 0)


def test_scoring_that_stops_each_street_search_early_equals_searching_to_the_end() -> None:
    seen = paid = 0
    for state in positions(40, seed=500):
        board, cap = state.cells()
        early = score_details(board, cap, state.layout, state.options)
        assert early == score_details(board, cap, state.layout, state.options, full_search=True)
        seen += 1
        paid += any(early["totals"].values())
    assert seen > 1000 and paid > 300


# --- the boards as they were drawn before the templates, lot by lot -------------------------------

def plain_board_lines(state: AlienCityState) -> list[str]:
    board, cap = state.cells()
    layout = state.layout
    letter = {"red": "R", "blue": "B", "green": "G", "black": "K"}
    cap_cell = (" ", "b", "w")
    cells = []
    for lot in range(N_LOTS):
        body = ".  "
        if board[lot]:
            kind, colour = PIECES[board[lot] - 1]
            body = ("T" if kind == "tower" else "D") + letter[colour] + cap_cell[cap[lot]]
        cells.append(f"{letter[COLOURS[layout.lot_colour[lot]]].lower()}"
                     f"{'*' if layout.is_icon[lot] else ' '} {body}")
    built, _claim = state.last_move_lots()
    built_lot = LOT_INDEX.get(built, -1) if built is not None else -1
    w = words()

    def border(ty: int | None) -> str:
        out = "   +"
        for tx in range(4):
            if ty is None:
                out += "-" * 15 + "+"
                continue
            tile = layout.tiles[4 * ty + tx]
            label = f"- {w[tile.colour]} {tile.number} "
            out += label + "-" * (15 - len(label)) + "+"
        return out

    header = [" "] * 68
    for column in range(8):
        tx, half = divmod(column, 2)
        header[4 + 16 * tx + 1 + 7 * half + 2] = COLUMNS[column]
    lines = ["".join(header).rstrip()]
    for row in range(10, 0, -1):
        if row % 2 == 0:
            lines.append(border((row - 1) // 2))
        text = f"{row:>2} |"
        for tx in range(4):
            west, east = lot_index(2 * tx, row), lot_index(2 * tx + 1, row)
            a, b = cells[west], cells[east]
            if west == built_lot:
                text += f"[{a}]{b} |"
            elif east == built_lot:
                text += f" {a}[{b}]|"
            else:
                text += f" {a} {b} |"
        lines.append(f"{text} {row}")
    lines.append(border(None))
    lines.append(lines[0])
    return lines


def plain_board_html(state: AlienCityState) -> str:
    board, cap = state.cells()
    tiles, icon = state.layout.tiles, state.layout.is_icon
    built, _claim = state.last_move_lots()
    built_lot = LOT_INDEX.get(built, -1) if built is not None else -1
    thick = "3px solid #333"
    head = "<tr><th></th>" + "".join(f"<th>{c}</th>" for c in COLUMNS) + "<th></th></tr>"
    out = [f'<table border=1 cellspacing=0 cellpadding=0 style="border-collapse:collapse;'
           f'border:{thick};font:16px/34px sans-serif;text-align:center">',
           '<colgroup><col width="24"/></colgroup>'
           + f'<colgroup span=2 width=38 style="border:{thick}"></colgroup>' * 4 + "<colgroup></colgroup>",
           f"<thead>{head}</thead>"]
    for row in range(10, 0, -1):
        if row % 2 == 0:
            out.append(f'<tbody style="border:{thick}">')
        cells = [f"<tr><th>{row}</th>"]
        for column in range(8):
            lot = lot_index(column, row)
            tile = tiles[TILE_OF[lot]]
            frame = f' style="border:4px solid {LAST}"' if lot == built_lot else ""
            body = f"★{tile.number}" if icon[lot] else ""
            if board[lot]:
                kind, colour = PIECES[board[lot] - 1]
                body += f"<font color={PIECE_FG[colour]}>{GLYPH[kind]}</font>"
                if cap[lot]:
                    body += f"<sup>{SEATS[cap[lot] - 1][0].upper()}</sup>"
            cells.append(f"<td bgcolor={TILE_BG[tile.colour]}{frame}>{body}</td>")
        cells.append(f"<th>{row}</th></tr>")
        out.append("".join(cells))
        if row % 2 == 1:
            out.append("</tbody>")
    out.append(f"<tfoot>{head}</tfoot></table>")
    return "".join(out)


@pytest.mark.parametrize("lang", ["en", "de", "sk"])
def test_boards_from_the_game_templates_equal_the_boards_drawn_lot_by_lot(lang) -> None:
    seen = framed = 0
    with using(translations(lang, "engine")):
        for state in positions(12, seed=700 + len(lang)):
            assert board_lines(state) == plain_board_lines(state)
            assert board_html(state) == plain_board_html(state)
            seen += 1
            framed += state.last_move is not None
    assert seen > 300 and framed == seen - 12
