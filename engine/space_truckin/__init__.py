"""Space Truckin': the tile-laying game on a 9 x 9 torus (rules: docs in ``help_topics()``)."""

from .game import SpaceTruckin, quadrant_of
from .moves import Pass, Place, Remove, Swap
from .state import SpaceTruckinState

__all__ = ["Pass", "Place", "Remove", "SpaceTruckin", "SpaceTruckinState", "Swap", "quadrant_of"]
