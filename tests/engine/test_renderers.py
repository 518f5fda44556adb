"""Every registered game draws through its ``Game.renderer``: the ``State.render*`` methods are that
renderer's output, and its SVG (defs once per page, a board per position) is well-formed XML whose
boards show one element per placed piece and refer only to drawings the defs hold."""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from engine.base import Game, Renderer, State
from engine.registry import available_games, get_game

SVG_NS = "{http://www.w3.org/2000/svg}"
PREFIX = "g7-"
LABEL = 'ac-1 <after> "ply" & more'


def _alien_city_pieces(state: Any) -> Counter[str]:
    structures = state.structures().values()
    return Counter(structure=len(structures), cap=sum(1 for s in structures if s.claimed_by))


def _space_truckin_pieces(state: Any) -> Counter[str]:
    placed = [cell for cell in range(81) if state.tile_at(cell) is not None]
    ships = sum(1 for cell in placed for segment in range(4) if state.ship_at(cell, segment))
    return Counter(tile=len(placed), ship=ships)


# What is on the board, by the game's public state: the one place the test has to know each game.
PIECES: dict[str, Callable[[Any], Counter[str]]] = {
    "alien-city": _alien_city_pieces,
    "space-truckin": _space_truckin_pieces,
}


def positions(game: Game, n_players: int, seed: int, every: int = 9) -> Iterator[State]:
    """Copies of the positions of one random game: the start, every ``every``-th ply, the end."""
    rng = random.Random(seed)
    options = game.normalize_options({})
    setup = game.create_setup(options, rng, n_players)
    state = game.start(options, setup)

    def draw() -> None:
        while state.pending_chance() is not None and not state.is_over:
            state.apply_chance(game.draw_chance(state, setup, rng.randrange(60)))

    draw()
    yield state.copy()
    while not state.is_over:
        state.push(state.random_move(rng))
        draw()
        if state.ply % every == 0 or state.is_over:
            yield state.copy()


def games() -> list[Game]:
    return [get_game(name) for name in available_games()]


def all_positions() -> Iterator[tuple[Game, State]]:
    for game in games():
        for n_players in sorted({game.min_players, game.max_players}):
            for state in positions(game, n_players, seed=n_players):
                yield game, state


@pytest.fixture(scope="module")
def played() -> list[tuple[Game, State]]:
    return list(all_positions())


def classes(element: ET.Element) -> set[str]:
    return set((element.get("class") or "").split())


def test_every_game_has_a_renderer_and_the_test_knows_its_pieces() -> None:
    assert games()
    for game in games():
        assert isinstance(game.renderer, Renderer)
        assert game.renderer is game.renderer  # one renderer per game, not one per call
    assert set(PIECES) == set(available_games())


def test_state_render_methods_are_the_renderers(played: list[tuple[Game, State]]) -> None:
    for game, state in played:
        for viewer in (None, *state.seats):
            assert state.render(viewer) == game.renderer.text(state, viewer)
            assert state.render_html(viewer) == game.renderer.html(state, viewer)
            assert state.render_legal(viewer) == game.renderer.legal(state, viewer)
        assert state.render() == game.renderer.text(state, None)
        assert state.render_html() == game.renderer.html(state, None)
        assert state.render_legal() == game.renderer.legal(state, None)


def test_a_game_ended_before_its_last_move_names_nobody_to_move(played: list[tuple[Game, State]]) -> None:
    """A resignation, a loss on time or an agreement ends a game in a position that would go on:
    drawn as ended, the board says the game is over instead of naming the seat to move; a position
    over by the rules is drawn as it always is."""
    for game, state in played:
        for viewer in (None, *state.seats):
            text, page = state.render(viewer, ended=True), state.render_html(viewer, ended=True)
            if state.is_over:
                assert (text, page) == (state.render(viewer), state.render_html(viewer))
                continue
            assert "To move" not in text and "To move" not in page, (game.name, state.ply)
            lines, usual = text.split("\n"), state.render(viewer).split("\n")
            changed = [i for i, (a, b) in enumerate(zip(lines, usual, strict=True)) if a != b]
            assert len(changed) == 1 and "over" in lines[changed[0]], (game.name, changed)


def test_the_renderer_is_what_state_render_uses(monkeypatch: pytest.MonkeyPatch) -> None:
    """Not a copy of the same drawing: replacing the game's renderer changes what the state shows."""

    class Marked(Renderer[State]):
        def text(self, state: State, viewer: str | None, *, ended: bool = False) -> str:
            return f"text {viewer}{' ended' if ended else ''}"

        def html(self, state: State, viewer: str | None, *, ended: bool = False) -> str:
            return f"html {viewer}{' ended' if ended else ''}"

        def legal(self, state: State, viewer: str | None) -> str:
            return f"legal {viewer}"

        def svg_defs(self, state: State, prefix: str) -> str:
            return ""

        def svg_board(self, state: State, prefix: str, label: str) -> str:
            return ""

        def svg_legend(self, state: State, prefix: str) -> str:
            return ""

    for game in games():
        state = next(positions(game, game.min_players, seed=1))
        monkeypatch.setattr(type(game), "renderer", Marked())
        seat = state.seats[0]
        assert (state.render(), state.render_html(seat), state.render_legal(seat)) == (
            "text None", f"html {seat}", f"legal {seat}")
        assert (state.render(seat, ended=True), state.render_html(None, ended=True)) == (
            f"text {seat} ended", "html None ended")


def test_svg_board_is_xml_with_one_element_per_piece(played: list[tuple[Game, State]]) -> None:
    seen: Counter[str] = Counter()
    for game, state in played:
        root = ET.fromstring(game.renderer.svg_board(state, PREFIX, LABEL))
        assert root.tag == f"{SVG_NS}svg"
        assert game.name in classes(root)
        title = root.find(f"{SVG_NS}title")
        assert title is not None and title.text == LABEL
        expected = PIECES[game.name](state)
        drawn = Counter({kind: sum(1 for e in root.iter() if kind in classes(e)) for kind in expected})
        assert drawn == expected, (game.name, state.ply)
        seen.update(expected)
    # every kind of piece was on some board, so the counts above checked something
    assert seen and all(count > 0 for count in seen.values()), seen


def test_board_refers_only_to_its_defs_and_the_defs_do_not_change(
        played: list[tuple[Game, State]]) -> None:
    first: dict[str, str] = {}
    for game, state in played:
        defs = game.renderer.svg_defs(state, PREFIX)
        first.setdefault(game.name, defs)
        assert defs == first[game.name]  # drawn once for the whole page, whatever the ply
        holder = ET.fromstring(f'<svg xmlns="http://www.w3.org/2000/svg"><defs>{defs}</defs></svg>')
        ids = {e.get("id") for e in holder.iter() if e.get("id") is not None}
        assert ids and all(str(i).startswith(PREFIX) for i in ids)
        board = ET.fromstring(game.renderer.svg_board(state, PREFIX, LABEL))
        refs = {e.get("href") for e in board.iter() if e.get("href") is not None}
        assert refs and {ref[1:] for ref in refs if ref} <= ids
        assert all(str(ref).startswith("#" + PREFIX) for ref in refs)
