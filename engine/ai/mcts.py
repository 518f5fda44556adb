"""Monte Carlo tree search over ``engine.base.State``, with chance nodes, for any game.

UCT (UCB1 on each seat's own mean reward, so it serves two to five seats) with progressive widening:
candidates come best first from the game's Knowledge and a node looks at more of them as it is
visited more. A chance node (a tile to draw) samples an outcome from public information each time it
is passed and keeps one child per distinct outcome, so the tree averages over what may be drawn
instead of peeking at the pile.

Deterministic: the only randomness is the ``random.Random`` passed in, and the budget's clock only
decides when to stop (see :mod:`engine.ai.budget`).
"""

from __future__ import annotations

import math
import random
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.ai.budget import Budget
from engine.ai.knowledge import Knowledge
from engine.base import EngineError, State


@dataclass(frozen=True)
class MoveStat:
    """One candidate at the root: how often it was tried and its mean reward to the mover."""

    move: Any  # the search move
    visits: int
    value: float


@dataclass
class SearchResult:
    """What a search found: ``move``, the chosen search move (the most visited; ties by mean);
    ``value``, each seat's expected reward after it (order of ``state.seats``; empty when the move
    was forced); ``stats``, the root's candidates that were tried, most visited first."""

    move: Any
    iterations: int
    seconds: float
    value: list[float]
    stats: list[MoveStat] = field(default_factory=list)


class _Node:
    __slots__ = ("kids", "moves", "outcomes", "sums", "visits")

    def __init__(self, seats: int):
        self.kids: list[_Node] = []
        self.moves: Sequence[Any] | None = None
        self.outcomes: dict[Hashable, _Node] | None = None
        self.sums = [0.0] * seats
        self.visits = 0


def search(state: State, knowledge: Knowledge[Any], rng: random.Random, budget: Budget,
           first: Any = None) -> SearchResult:
    """Search from ``state`` (not modified) for its seat to move until the budget is spent; the time
    counts from the call, so ordering the candidates is part of it. ``first``: a search move to try
    before all others (analysis judges the move that was played this way)."""
    if state.to_move is None:
        raise EngineError("nobody is to move in this position")
    clock = budget.clock
    started = clock()
    more = budget.start()
    seats = len(state.seats)
    index = {seat: i for i, seat in enumerate(state.seats)}
    root = _Node(seats)
    moves = list(knowledge.candidates(state, rng, True))
    if first is not None:
        moves = [first, *(m for m in moves if m != first)]
    root.moves = moves
    if not moves:
        raise EngineError("the game knowledge offered no move")
    iterations = 0
    if len(moves) > 1:
        params = knowledge.params
        while more(iterations):
            _iterate(root, state, knowledge, rng, index, params.exploration, params.widen_base,
                     params.widen_factor, params.widen_power)
            iterations += 1
    stats = [MoveStat(root.moves[k], kid.visits, kid.sums[index[state.to_move]] / kid.visits)
             for k, kid in enumerate(root.kids)]
    if stats:
        best = max(range(len(stats)), key=lambda k: (stats[k].visits, stats[k].value, -k))
        chosen = root.kids[best]
        value = [v / chosen.visits for v in chosen.sums]
        move = stats[best].move
    else:  # a single candidate: nothing to search
        move, value = root.moves[0], []
    order = sorted(range(len(stats)), key=lambda k: (-stats[k].visits, -stats[k].value, k))
    return SearchResult(move=move, iterations=iterations, seconds=clock() - started, value=value,
                        stats=[stats[k] for k in order])


def _iterate(root: _Node, state: State, knowledge: Knowledge[Any], rng: random.Random,
             index: dict[str, int], c: float, base: int, factor: float, power: float) -> None:
    s = state.copy()
    node = root
    path = [root]
    while True:
        if s.is_over:
            rewards = knowledge.rewards(s)
            break
        seat = s.to_move
        if seat is None:  # a chance event: sample it from public information
            key, value = knowledge.sample_chance(s, rng)
            if node.outcomes is None:
                node.outcomes = {}
            child = node.outcomes.get(key)
            if child is None:
                child = node.outcomes[key] = _Node(len(node.sums))
            s.apply_chance(value)
            node = child
            path.append(node)
            continue
        moves = node.moves
        if moves is None:
            moves = node.moves = knowledge.candidates(s, rng, False)
        kids = node.kids
        width = base + int(factor * node.visits ** power)
        if len(kids) < width and len(kids) < len(moves):
            child = _Node(len(node.sums))
            knowledge.play(s, moves[len(kids)])
            kids.append(child)
            path.append(child)
            rewards = knowledge.rewards(s) if s.is_over else knowledge.rollout(s, rng)
            break
        i = index[seat]
        log_n = math.log(node.visits)
        best, best_score = 0, -1.0
        for k, kid in enumerate(kids):
            n = kid.visits
            score = kid.sums[i] / n + c * math.sqrt(log_n / n)
            if score > best_score:
                best, best_score = k, score
        knowledge.play(s, moves[best])
        node = kids[best]
        path.append(node)
    for node in path:
        node.visits += 1
        sums = node.sums
        for k, r in enumerate(rewards):
            sums[k] += r
