"""How long a computer player may think: a number of search iterations, a time, or both.

The engine has no clock of its own. The only clock a search reads is the one a Budget holds: by default
``time.perf_counter`` (monotonic), read once per iteration to stop the search, never to decide
anything else. So a search is a function of (position, seed, number of iterations): given a cap on
iterations that the time allowed does not cut short, the same inputs give the same move on any machine;
with only a time limit, a faster machine completes more iterations, and the move is the one the
deterministic search with that many iterations picks (``SearchResult.iterations`` says how many).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Budget:
    """``seconds``: wall time a move may take (None: no limit); ``iterations``: the most search
    iterations (None: no limit). At least one must be set for a search; at least one iteration
    always runs, so a search always has a move."""

    seconds: float | None = None
    iterations: int | None = None
    clock: Callable[[], float] = field(default=time.perf_counter, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.seconds is not None and self.seconds < 0:
            raise ValueError(f"a time budget is at least 0 seconds, not {self.seconds}")
        if self.iterations is not None and self.iterations < 1:
            raise ValueError(f"an iteration budget is at least 1, not {self.iterations}")

    @property
    def limited(self) -> bool:
        return self.seconds is not None or self.iterations is not None

    def start(self) -> Callable[[int], bool]:
        """A test ``more(done)``: whether iteration ``done + 1`` may start."""
        cap = self.iterations
        if self.seconds is None:
            if cap is None:
                raise ValueError("a search needs a time or an iteration budget")
            return lambda done: done < cap
        clock = self.clock
        deadline = clock() + self.seconds
        if cap is None:
            return lambda done: done < 1 or clock() < deadline
        return lambda done: done < 1 or (done < cap and clock() < deadline)
