"""What a game teaches the generic players and search (levels 1-4), and how results become rewards.

Each game implements :class:`Knowledge` in its own package (``engine/<game>/ai.py``): the generic
search in :mod:`engine.ai.mcts` knows nothing of any game's rules beyond ``engine.base.State``.
Knowledge sees only what the seat to move may see: a ``State`` holds no hidden information (Space
Truckin's draw pile lives in the setup, which no player is given), and chance events are sampled
from public information only (the tiles not yet seen).
"""

from __future__ import annotations

import math
import random
from abc import ABC, abstractmethod
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from engine.base import EngineError, State

S = TypeVar("S", bound=State)


@dataclass(frozen=True)
class SearchParams:
    """The tree policy. ``exploration``: the UCB constant (rewards are in [0, 1]). Progressive
    widening: a decision node considers its first ``widen_base + widen_factor * visits **
    widen_power`` candidates (they come best first), so a few visits go deep instead of wide."""

    exploration: float = 0.5
    widen_base: int = 6
    widen_factor: float = 1.0
    widen_power: float = 0.5


class Knowledge(ABC, Generic[S]):
    """Game knowledge for one level. "Search moves" are whatever is cheapest for the game to apply
    in a search (e.g. tuples of ints); :meth:`engine_move` turns the chosen one into the game's move."""

    params: SearchParams = SearchParams()

    def random_move(self, state: S, rng: random.Random) -> Any:
        """Level 1: a random legal move, optional parts (claims, ships) filled at random."""
        return state.random_move(rng)

    @abstractmethod
    def greedy_move(self, state: S, rng: random.Random) -> Any:
        """Level 2: the legal move with the best immediate change of score (ties by ``rng``)."""

    @abstractmethod
    def candidates(self, state: S, rng: random.Random, root: bool) -> Sequence[Any]:
        """Search moves at a decision node, most promising first; never empty. ``root``: the
        position the player is deciding on (worth a careful, dearer ordering; every candidate there
        must be legal as the game's move)."""

    @abstractmethod
    def play(self, state: S, move: Any) -> None:
        """Apply a search move to a search copy."""

    @abstractmethod
    def engine_move(self, state: S, move: Any) -> Any:
        """The game's move (for ``State.push``) for a search move of ``candidates(state, root=True)``."""

    @abstractmethod
    def search_move(self, state: S, move: Any) -> Any:
        """The search move for a legal game move (the inverse of :meth:`engine_move`)."""

    @abstractmethod
    def rollout(self, state: S, rng: random.Random) -> Sequence[float]:
        """Play on from ``state`` (a copy the search owns) with a fast policy; each seat's reward in
        [0, 1], in the order of ``state.seats``."""

    @abstractmethod
    def rewards(self, state: S) -> Sequence[float]:
        """Each seat's reward for a finished game, in the order of ``state.seats``."""

    def sample_chance(self, state: S, rng: random.Random) -> tuple[Hashable, Mapping[str, Any]]:
        """A chance event for ``state.pending_chance()`` drawn from what every player may know,
        and a key under which equal outcomes share one branch of the tree."""
        raise EngineError(f"{state.game.title} has no chance events")


def outcome_rewards(totals: Sequence[float], playing: Sequence[bool], margin_weight: float,
                    margin_scale: float) -> list[float]:
    """Rewards from final totals: the winners share 1 (a two-player draw is 0.5 each), blended with
    ``margin_weight`` of a logistic in each seat's lead over the best other seat (``margin_scale``
    points to go from 0.5 to 0.73), so that the search also prefers winning by more and losing by
    less. Seats not ``playing`` (dropped) get 0 and cannot win. For two seats the rewards sum to 1."""
    live = [t for t, p in zip(totals, playing, strict=True) if p] or list(totals)
    best = max(live)
    winners = [i for i, t in enumerate(totals) if playing[i] and t == best]
    share = 1.0 / len(winners) if winners else 0.0
    out = []
    for i, t in enumerate(totals):
        if not playing[i]:
            out.append(0.0)
            continue
        others = [u for j, u in enumerate(totals) if j != i and playing[j]]
        lead = t - max(others) if others else 0.0
        margin = 1.0 / (1.0 + math.exp(-lead / margin_scale))
        base = share if i in winners else 0.0
        out.append((1.0 - margin_weight) * base + margin_weight * margin)
    return out
