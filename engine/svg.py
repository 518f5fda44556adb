"""Small SVG helpers shared by the games' board drawings.

They live in the engine, not in ``pbem``, because each game draws its own board (``Renderer.svg_defs``
and ``svg_board``) and the engine never imports the server. Nothing here knows any game.
"""

from __future__ import annotations

from html import escape
from typing import Any

# The namespace attribute every top-level ``<svg>`` needs to be read as SVG inside HTML and as XML.
XMLNS = 'xmlns="http://www.w3.org/2000/svg"'


def attr(value: Any) -> str:
    """An attribute value escaped for a double-quoted attribute (player names may hold anything)."""
    return escape(str(value), quote=True)


def text(x: float, y: float, content: str, size: int = 11, fill: str = "#333",
         anchor: str = "middle") -> str:
    """A label centred on (x, y): coordinates and tile numbers look the same on every board."""
    return (f'<text x="{x:g}" y="{y:g}" font-size="{size}" fill="{fill}" text-anchor="{anchor}" '
            f'dominant-baseline="central" font-family="sans-serif">{escape(content)}</text>')


__all__ = ["XMLNS", "attr", "text"]
