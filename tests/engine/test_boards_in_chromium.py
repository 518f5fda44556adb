"""The HTML boards of the mails as a phone shows them: headless Chromium at 360 px wide, the
board whole on the screen (no sideways scrolling), the last move framed, screenshots kept under
the test's tmp directory and named in its output (``pytest -s``)."""

from __future__ import annotations

import random
from html import escape
from pathlib import Path

from engine.base import random_positions
from engine.registry import available_games, get_game
from tests.services.browser import Browser

# How wide the renderer's fragment lays out (an inline block is as wide as its widest part), how
# wide its board table is, and the cells framed by an inline border of their own.
MEASURE = """(() => {
  const fragment = document.getElementById('fragment').getBoundingClientRect();
  const table = document.querySelector('#fragment table');
  const framed = [...table.querySelectorAll('td')].filter(td => td.style.borderTopWidth);
  return {right: fragment.right, board: table.getBoundingClientRect().width, framed: framed.length};
})()"""


def test_html_boards_on_a_phone(tmp_path: Path) -> None:
    shots = []
    with Browser(tmp_path / "profile") as browser:
        for name in available_games():
            game = get_game(name)
            for n_players in sorted({game.min_players, game.max_players}):
                states = random_positions(game, {}, n_players, random.Random(n_players))
                state = next(s for s in states if s.ply >= 20 and s.last_move and "pass" not in s.last_move)
                page = tmp_path / f"{name}-{n_players}.html"
                page.write_text(
                    '<!DOCTYPE html><html><head><meta charset="utf-8"><meta name="viewport" '
                    'content="width=device-width, initial-scale=1"></head><body style="margin:8px">'
                    f'<div id="fragment" style="display:inline-block">{state.render_html(state.to_move)}'
                    f"</div><pre>{escape(state.render_legal(state.to_move))}"
                    "</pre></body></html>", encoding="utf-8")
                browser.open(page.as_uri())
                seen = browser.evaluate(MEASURE)
                assert seen["right"] <= 360 and seen["board"] > 250, (name, n_players, seen)
                assert seen["framed"] >= 1, (name, state.last_move)
                shots.append(browser.screenshot(tmp_path / f"360px-{name}-{n_players}.png"))
    for shot in shots:
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        print(f"screenshot at 360 px: {shot}")
