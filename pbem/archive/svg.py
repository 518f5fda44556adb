"""The boards as SVG for the archive site, drawn by each game's renderer (``Game.renderer``).

Each game page shows every ply, so what does not change during a game is drawn once in ``defs`` and
each ply only places references and pieces: a 150-ply game stays a page of a few hundred kilobytes.
What to draw is the game's business (``engine.base.Renderer.svg_defs`` and ``svg_board``); this
module only gives the shared drawings their place in the page, so it names no game.
"""

from __future__ import annotations

from engine.base import State
from engine.svg import XMLNS


def defs(state: State, prefix: str) -> str:
    """The shared drawings of one game page: an SVG of size 0 holding only ``defs``."""
    body = state.game.renderer.svg_defs(state, prefix)
    return (f'<svg {XMLNS} width="0" height="0" style="position:absolute" aria-hidden="true">'
            f"<defs>{body}</defs></svg>")


def board(state: State, prefix: str, label: str) -> str:
    """One position; ``label`` becomes the SVG's accessible title."""
    return state.game.renderer.svg_board(state, prefix, label)


__all__ = ["board", "defs"]
