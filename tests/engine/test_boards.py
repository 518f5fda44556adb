"""What players read of a board (issue 10): the last move marked on the text, HTML and SVG boards of
both games, HTML boards small enough for a game's worth of mail, every line at most 78 columns
(prose of the help at most 72), final scores as a table that names no winner, and Space Truckin'
swaps listed by pair of cells, every legal swap and nothing else."""

from __future__ import annotations

import random
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from html.parser import HTMLParser
from typing import Any

import pytest

from engine.alien_city import AlienCity
from engine.base import Game, IllegalMoveError, State, random_positions
from engine.registry import available_games, get_game
from engine.space_truckin import SpaceTruckin, Swap
from engine.space_truckin.geometry import parse_cell
from engine.space_truckin.html_board import LAST as ST_LAST

SVG_NS = "{http://www.w3.org/2000/svg}"
# The mail budget: a whole 2-player Alien City game is about 22 mails of board and listing.
HTML_LIMIT = {"alien-city": 5_000, "space-truckin": 8_000}
OPTIONS: dict[str, list[dict[str, Any]]] = {
    "alien-city": [{}, {"edition": "1.2", "symmetric": True, "location_bonus": True},
                   {"handicap": {"white": {"reach": 4, "extra_claims": 3}}}],
    "space-truckin": [{}],
}


def play(game: Game, options: dict[str, Any], n_players: int, seed: int) -> Iterator[State]:
    """Copies of every position of one random game."""
    return (state.copy() for state in random_positions(game, options, n_players, random.Random(seed)))


@pytest.fixture(scope="module")
def positions() -> list[State]:
    out: list[State] = []
    for name in available_games():
        game = get_game(name)
        for options in OPTIONS[name]:
            for n_players in range(game.min_players, game.max_players + 1):
                out += play(game, options, n_players, seed=n_players + len(out))
    return out


def marked_places(state: State) -> set[str]:
    """Where the last move is, read from its text: the lot built on (Alien City, not the claim),
    every cell the move names (Space Truckin')."""
    if not state.last_move:
        return set()
    text = state.last_move.split(": ", 1)[1]
    if state.game.name == "alien-city":
        return {text.split()[2]}
    return {w for w in text.split() if parse_cell(w) is not None}


# --- the last move ------------------------------------------------------------------------------

def text_marks(state: State) -> set[str]:
    """The lots or cells in brackets on the text board."""
    lines = state.render().splitlines()
    found = set()
    if state.game.name == "alien-city":
        for line in lines:
            m = re.match(r"^\s*(\d+) \|", line)
            if not m:
                continue
            for column in range(8):
                start = 4 + 16 * (column // 2) + 7 * (column % 2)
                if line[start] == "[" and line[start + 7] == "]":
                    found.add(f"{'ABCDEFGH'[column]}{m.group(1)}")
        return found
    for line in lines:
        m = re.match(r"^(\d) ", line)
        if not m:
            continue
        for column in range(9):
            if line[2 + 6 * column] in "[|" and line[8 + 6 * column] in "]|":
                found.add(f"{'ABCDEFGHI'[column]}{m.group(1)}")
    return found


class Cells(HTMLParser):
    """The board table of the mail's HTML: (row label, column index) of each framed cell."""

    def __init__(self, frame: str) -> None:
        super().__init__()
        self.frame, self.row, self.column, self.tables = frame, "", -1, 0
        self.framed: set[tuple[str, int]] = set()
        self.in_th = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables += 1
        if self.tables != 1:
            return
        if tag == "tr":
            self.row, self.column = "", -1
        if tag == "th":
            self.in_th = True
        if tag == "td":
            self.column += 1
            if self.frame in (dict(attrs).get("style") or ""):
                self.framed.add((self.row, self.column))

    def handle_endtag(self, tag: str) -> None:
        if tag == "th":
            self.in_th = False

    def handle_data(self, data: str) -> None:
        if self.in_th and self.column < 0 and data.strip():
            self.row = data.strip()


def html_marks(state: State) -> set[str]:
    parser = Cells(f"solid {ST_LAST}" if state.game.name == "space-truckin" else "solid #f0f")
    parser.feed(state.render_html())
    letters = "ABCDEFGHI"
    return {f"{letters[column]}{row}" for row, column in parser.framed}


def svg_marks(state: State) -> set[str]:
    root = ET.fromstring(state.game.renderer.svg_board(state, "p-", "label"))
    return {e.get("data-lot") or e.get("data-cell") or "?" for e in root.iter()
            if "last-move" in (e.get("class") or "").split()}


def test_the_last_move_is_marked_on_every_board(positions: list[State]) -> None:
    seen = {name: 0 for name in available_games()}
    for state in positions:
        where = marked_places(state)
        about = (state.game.name, state.ply, state.last_move)
        assert text_marks(state) == where, about
        assert html_marks(state) == where, about
        assert svg_marks(state) == where, about
        if where:
            seen[state.game.name] += 1
            assert "(in [ ] on the board)" in state.render()
    assert all(seen.values()), seen


def test_a_claim_on_another_tower_is_marked_too() -> None:
    state = next(s for s in play(AlienCity(), {}, 2, 5)
                 if s.last_move and " claim " in s.last_move
                 and s.last_move.split()[-1] != s.last_move.split()[3])
    root = ET.fromstring(state.game.renderer.svg_board(state, "p-", "label"))
    claims = [e.get("data-lot") for e in root.iter() if e.get("class") == "last-claim"]
    assert claims == [state.last_move.split()[-1]]


# --- size and width -----------------------------------------------------------------------------

def test_html_boards_fit_the_mail_budget(positions: list[State]) -> None:
    sizes: dict[str, list[int]] = {}
    for state in positions:
        html = state.render_html(state.to_move)
        assert "<svg" not in html and "<style" not in html  # mail clients drop both
        sizes.setdefault(state.game.name, []).append(len(html.encode()))
    for name, found in sizes.items():
        assert max(found) <= HTML_LIMIT[name], (name, max(found))


def test_every_line_fits_in_78_columns_and_help_prose_in_72(positions: list[State]) -> None:
    for state in positions:
        for viewer in (None, *state.seats[:1]):
            for text in (state.render(viewer), state.render_legal(viewer), state.score().text):
                assert text.isascii()
                wide = [line for line in text.splitlines() if len(line) > 78]
                assert not wide, (state.game.name, state.ply, wide)
    for name in available_games():
        for topic, text in get_game(name).help_topics().items():
            wide = [line for line in text.splitlines() if len(line) > 72]
            assert not wide, (name, topic, wide)


# --- scores -------------------------------------------------------------------------------------

def test_final_scores_are_a_table_that_names_no_winner(positions: list[State]) -> None:
    finals = [s for s in positions if s.is_over]
    assert {s.game.name for s in finals} == set(available_games())
    for state in finals:
        score = state.score()
        lines = score.text.splitlines()
        heading = lines[0].split()
        assert heading[0] == "Final" and [w.rstrip("*") for w in heading[-len(state.seats):]] == \
            list(state.seats)
        total = next(line for line in lines if line.startswith("Total"))
        assert total.split()[1:] == [str(score.totals[s]) for s in state.seats]
        assert not re.search(r"\bwin|\bwinner|\bdraw\b|\bleads\b", score.text, re.I), score.text


# --- Alien City claims --------------------------------------------------------------------------

def test_no_claim_hint_for_a_seat_without_caps(positions: list[State]) -> None:
    capless = [s for s in positions if s.game.name == "alien-city" and not s.is_over
               and s.caps_left(s.to_move) == 0]
    assert capless
    for state in capless:
        listing = state.render_legal(state.to_move)
        assert "no caps left: no claim is possible" in listing
        assert "claimed" not in listing and " claim " not in listing.replace("no claim is", "")


# --- Space Truckin' swaps -----------------------------------------------------------------------

def swaps_listed(listing: str) -> tuple[set[Swap], list[str]]:
    """Every swap the grouped listing stands for, and its group lines."""
    rot = {"any": (0, 90, 180, 270)}
    block = listing.split("(b) swap two tiles:")[1].split("(c) pass")[0]
    groups = [line for line in block.splitlines()[4:]]
    out: set[Swap] = set()
    for pair in re.split(r";\s*", " ".join(groups)):
        for product in pair.split(" or "):
            a, ra, b, rb = product.split()
            for x in rot.get(ra) or tuple(int(v) for v in ra.split("/")):
                for y in rot.get(rb) or tuple(int(v) for v in rb.split("/")):
                    out.add(Swap(a, x, b, y))
    return out, groups


def test_swaps_are_listed_by_pair_of_cells_every_one_of_them() -> None:
    game = SpaceTruckin()
    checked = 0
    for seed in range(3):
        for state in play(game, {}, 2 + seed, seed):
            if not (state.drawn_tile or "").startswith("blackhole") or state.ply < 20:
                continue
            legal = {m for m in state.legal_moves() if isinstance(m, Swap)}
            listing = state.render_legal(state.to_move)
            listed, groups = swaps_listed(listing)
            assert listed == legal
            pairs = re.findall(r"([A-I]\d) \S+ ([A-I]\d) \S+", " ".join(groups))
            distinct = {(a, b) for a, b in pairs}
            assert len(distinct) == len({(m.cell_a, m.cell_b) for m in legal})
            assert all(len(line) <= 72 for line in listing.splitlines())
            checked += 1
    assert checked >= 3


def test_swaps_of_neighbours_and_across_the_seam_are_listed() -> None:
    """The cases the listing missed (issue 15): the shared edge is checked between the two tiles
    in their new places, not against the tile that has just left."""
    state = SpaceTruckin().start({}, {"seats": ["red", "blue"], "first": "red"})
    # Found by search: the swap fits only once the other tile has left (the old listing looked
    # for rotations that fit next to the tile about to leave, found none, and skipped the pair).
    state.arrange({"A6": ("two-caps-opposite#3", 0), "I6": ("two-caps-adjacent#1", 270),
                   "B6": ("station-wormhole#2", 0), "D8": ("corner#1", 90),
                   "D9": ("cap-curve-right#3", 270), "C8": ("corner#4", 270)}, keep_start=False)
    state.apply_chance({"tile": "blackhole#1", "quadrant": "NE"})
    legal = {m for m in state.legal_moves() if isinstance(m, Swap)}
    for a, b in (("A6", "I6"), ("D8", "D9")):
        for ra in (0, 90, 180, 270):
            for rb in (0, 90, 180, 270):
                move = Swap(a, ra, b, rb)
                probe = state.copy()
                try:
                    probe.push(move)
                except IllegalMoveError:
                    assert move not in legal
                else:
                    assert move in legal
    assert {m for m in legal if m.cell_a == "A6" and m.cell_b == "I6"} == {
        Swap("A6", ra, "I6", rb) for ra in (180, 270) for rb in (90, 270)}
    assert {m for m in legal if m.cell_a == "D8" and m.cell_b == "D9"} == {
        Swap("D8", 0, "D9", 90), Swap("D8", 0, "D9", 180)}
    listed, _ = swaps_listed(state.render_legal())
    assert listed == legal


def test_help_states_the_swap_and_arrow_conventions() -> None:
    notation = SpaceTruckin().help_topics()["notation"]
    flat = " ".join(notation.split())
    assert 'in "swap A ra B rb" the tile that lands on A gets rotation ra' in flat
    assert "straight#1 and curve#1 carry two arrows" in flat
    assert "junction4, two-caps-adjacent and full have no arrow" in flat


def test_space_truckin_html_is_a_drawn_table() -> None:
    state = next(s for s in play(SpaceTruckin(), {}, 3, 8) if s.ply == 30)
    html = state.render_html(state.to_move)
    board = html.split("</table>")[0]
    assert board.startswith("<table") and "<pre" not in board
    placed = [c for c in range(81) if state.tile_at(c) is not None]
    assert board.count("<td bgcolor=#123") == len(placed)
    assert "┃" in board or "━" in board  # wormholes are drawn as lines
    assert "●" in board  # planets as discs



def test_every_game_has_an_svg_legend_drawn_from_its_defs() -> None:
    for name in available_games():
        game = get_game(name)
        state = next(play(game, {}, game.max_players, 1))
        defs = game.renderer.svg_defs(state, "g1-")
        ids = {e.get("id") for e in ET.fromstring(
            f'<svg xmlns="http://www.w3.org/2000/svg"><defs>{defs}</defs></svg>').iter()}
        legend = ET.fromstring(game.renderer.svg_legend(state, "g1-"))
        items = legend.findall("li")
        assert legend.tag == "ul" and len(items) >= 6, name
        for item in items:
            drawings = item.findall(f"{SVG_NS}svg")
            assert len(drawings) == 1 and "".join(item.itertext()).strip(), name
            refs = {e.get("href") for e in drawings[0].iter() if e.get("href")}
            assert {ref[1:] for ref in refs} <= ids, name
        assert any("last move" in "".join(item.itertext()) for item in items), name
