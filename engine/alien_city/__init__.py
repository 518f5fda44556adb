"""Alien City (Michael Schoessow), editions 2.2 and 1.2, for play by mail.

Modules: ``board`` (coordinates, tiles, pieces), ``streets`` (street network and articulation
structure), ``rules`` (where each piece may go), ``moves`` and ``notation`` (move objects and texts),
``variants`` (options and setups), ``state`` (the position), ``scoring``, ``render`` (text, HTML and
legal-move listings, and the game's Renderer), ``svg`` (the board for the archive site), ``help`` (help
texts), ``positions`` (hand-built positions), ``game`` (the Game, which wires state and renderer:
the state never imports what draws it).
"""

from engine.alien_city.game import AlienCity
from engine.alien_city.moves import Move
from engine.alien_city.state import AlienCityState, Structure

__all__ = ["AlienCity", "AlienCityState", "Move", "Structure"]
