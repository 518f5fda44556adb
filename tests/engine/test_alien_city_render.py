"""Alien City boards and listings for mail: ASCII within 72 columns, HTML escaped, listings marked."""

from __future__ import annotations

import textwrap
from html.parser import HTMLParser

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.alien_city import AlienCity
from engine.alien_city.positions import position, setup_from_text
from engine.alien_city.render import wrap_words


def lines_fit(text: str) -> None:
    assert text.isascii()
    assert max(len(line) for line in text.splitlines()) <= 72


def test_text_board_layout() -> None:
    state = position("G1:TRb H3:DK")
    text = state.render("black")
    lines_fit(text)
    rows = text.splitlines()
    board_rows = [line for line in rows if line[:3].strip().isdigit() and "|" in line]
    assert [int(line[:3]) for line in board_rows] == list(range(10, 0, -1))  # north up
    header = next(line for line in rows if line.split() == list("ABCDEFGH"))
    assert header.split() == list("ABCDEFGH")
    # G1: black tile, not the icon lot, red tower claimed by black; H3: black dome on black 3.
    row1 = board_rows[-1]
    assert "k  TRb" in row1
    assert "k  DK " in board_rows[-3]
    # Icon lots are starred (G2 is the black 4 tile's icon) and tile boundaries are labelled.
    assert "k* ." in board_rows[-2]
    assert "- black 4 " in text and "- red 1 " in text
    assert "+---------------+" in text
    assert "You play black." in text


def test_text_board_lists_supplies_turn_and_last_move() -> None:
    state = position()
    state.push("tower green G1 claim G1")
    text = state.render(None)
    assert "black  towers: red 2  blue 3  green 1    caps left: 2" in text
    assert "white  towers: red 3  blue 2  green 2    caps left: 3" in text
    assert "domes:  red 3  blue 3  green 3  black 3" in text
    assert "To move: white, move 2." in text
    assert "Last move: black: tower green G1 claim G1" in text
    assert "Each lot: tile colour" in text  # the legend


def test_text_board_mentions_variants_and_handicap() -> None:
    state = AlienCity().start({"symmetric": True, "location_bonus": True,
                               "handicap": {"white": {"reach": 3, "extra_claims": 1}}},
                              setup_from_text())
    text = state.render(None)
    lines_fit(text)
    assert "symmetric start" in text and "location bonus" in text
    assert "Handicap: white customers within 3 and 1 extra cap." in text
    assert "TR " in text and "TB " in text


def test_game_over_rendering() -> None:
    state = position(supply={"black": {"dome black": 1}, "white": {}})
    state.push("dome black G1")
    assert "Game over after 1 moves" in state.render(None)
    assert "The game is over" in state.render_legal(None)


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.open: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs) -> None:
        self.tags.append(tag)
        self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.open and self.open[-1] == tag, f"unbalanced </{tag}>"
        self.open.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_html_board_is_a_coloured_escaped_table() -> None:
    state = position("G1:TRb")
    page = state.render_html("black")
    parser = _Collect()
    parser.feed(page)
    assert not parser.open
    assert parser.tags.count("td") == 80
    assert "bgcolor=#bbb" in page  # black tile
    assert "bgcolor=#ecc" in page  # red tile
    # G1, the 7th lot of the bottom row, on the black 4 tile: a red tower claimed by black (the
    # mail's HTML carries no per-lot titles, to stay small: the cell shows it)
    row1 = page.split("<th>1</th>")[1].split("</tr>")[0]
    g1 = row1.split("</td>")[6]
    assert g1 == "<td bgcolor=#bbb><font color=#c00>▲</font><sup>B</sup>"
    assert "caps left: 2" in page
    assert "<script" not in page


def test_legal_listing_groups_by_piece_and_states_claims() -> None:
    state = position("H3:TB")
    text = state.render_legal("black")
    lines_fit(text)
    assert text.startswith("Legal builds for black (you), move 1:")
    assert "red tower: " in text and "black dome: " in text
    start = text.index("red tower:")
    red = text[start:text.index("blue tower:")].split()  # the group may wrap onto two lines
    assert "G1" in red and "C4" not in red
    assert "Towers that may be claimed: H3 (or the tower you build)" in text
    assert "A claim is possible this turn (black has 3 caps left)" in text
    assert "*" not in text


def test_legal_listing_skips_empty_groups() -> None:
    state = position(supply={"black": {"dome black": 2}})
    text = state.render_legal(None)
    assert "tower" not in text.split("\n")[1]
    assert [line.split(":")[0] for line in text.splitlines()[1:2]] == ["black dome"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="AB12-* \t", min_size=0, max_size=9), min_size=1, max_size=40),
       st.integers(min_value=8, max_value=80), st.sampled_from(["", "  ", "    "]))
def test_wrap_words_is_textwrap(words, width, indent):
    """The legal listing's fast wrapper gives exactly textwrap's lines, for any input."""
    text = " ".join(words)
    assert wrap_words(text, width, indent) == textwrap.wrap(text, width, subsequent_indent=indent)
    assert wrap_words(text, width, indent, break_on_hyphens=False) == textwrap.wrap(
        text, width, subsequent_indent=indent, break_on_hyphens=False)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.text(alphabet="AB12-*:(", min_size=1, max_size=9), min_size=1, max_size=80),
       st.integers(min_value=1, max_value=80), st.sampled_from(["", "  ", "    "]),
       st.booleans())
def test_wrap_words_is_textwrap_for_listings(words, width, indent, break_on_hyphens):
    """Words joined by single spaces, as listings are: mostly the fast way, lines at every width."""
    text = " ".join(words)
    assert wrap_words(text, width, indent, break_on_hyphens) == textwrap.wrap(
        text, width, subsequent_indent=indent, break_on_hyphens=break_on_hyphens)
