"""Space Truckin' engine speed, measured against the goals the server was sized for.

Goals: listing the legal placements of a drawn tile in mid-game takes at most 2 ms (median), because
every reply mail carries that listing; and random complete 2-player games run at 20 per second or
more, so the property tests and self-play stay quick. Run directly: ``python bench/engine_space_truckin.py``.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

if not __package__:  # run as a script: see bench/__init__.py
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.harness.report import games_per_second, median_p95_ms
from engine.space_truckin import Place, SpaceTruckin, SpaceTruckinState

GAME = SpaceTruckin()
PLACEMENT_GOAL_MS = 2.0
GAMES_GOAL_PER_S = 20.0


def _play(seed: int, stop: Callable[[SpaceTruckinState], bool] | None = None) -> SpaceTruckinState:
    """A random 2-player game from ``seed``, chance draws included, until it is over or ``stop``
    says so; one loop, so the positions timed and the games counted are played alike."""
    rng = random.Random(seed)
    setup = GAME.create_setup({}, rng, 2)
    state = GAME.start({}, setup)
    while not state.is_over:
        if state.pending_chance():
            state.apply_chance(GAME.draw_chance(state, setup, rng.randrange(60)))
        elif stop is not None and stop(state):
            return state
        else:
            state.push(state.random_move(rng))
    return state


def mid_game(seed: int, ply: int = 40) -> SpaceTruckinState | None:
    """A 2-player position after ``ply`` random moves, with a space tile drawn and waiting."""
    state = _play(seed, lambda s: s.ply >= ply and bool(s.drawn_tile)
                  and not s.drawn_tile.startswith("blackhole"))
    return None if state.is_over else state


def bench_placements(positions: int = 30, repeat: int = 20) -> dict[str, float]:
    """Placements are timed warm (``repeat`` times per position), the mail listing once."""
    samples = []
    listing = []
    sizes = []
    for seed in range(positions * 3):
        state = mid_game(seed)
        if state is None:
            continue
        for _ in range(repeat):
            start = time.perf_counter()
            moves = state.legal_moves()
            samples.append(time.perf_counter() - start)
        start = time.perf_counter()
        state.render_legal()
        listing.append(time.perf_counter() - start)
        sizes.append(len(moves))
        assert all(isinstance(m, Place) for m in moves)
        if len(sizes) >= positions:
            break
    median_ms, p95_ms = median_p95_ms(samples)
    return {"median_ms": median_ms, "p95_ms": p95_ms,
            "mean_placements": statistics.mean(sizes),
            "listing_median_ms": statistics.median(listing) * 1000}


def random_game(seed: int) -> int:
    """One complete game; its length, for the mean."""
    return _play(seed).ply


def main() -> int:
    placements = bench_placements()
    games = games_per_second(random_game, 1000)
    ok_p = placements["median_ms"] <= PLACEMENT_GOAL_MS
    ok_g = games["games_per_s"] >= GAMES_GOAL_PER_S
    print(f"legal placements, mid-game: median {placements['median_ms']:.3f} ms, "
          f"p95 {placements['p95_ms']:.3f} ms, {placements['mean_placements']:.0f} placements "
          f"(goal <= {PLACEMENT_GOAL_MS} ms) {'ok' if ok_p else 'MISSED'}")
    print(f"legal-move listing for a mail (render_legal), mid-game: median "
          f"{placements['listing_median_ms']:.3f} ms")
    print(f"random 2-player games: {games['games_per_s']:.1f} per second over {games['games']} games, "
          f"{games['mean_plies']:.0f} moves each (goal >= {GAMES_GOAL_PER_S}) {'ok' if ok_g else 'MISSED'}")
    return 0 if ok_p and ok_g else 1


if __name__ == "__main__":
    raise SystemExit(main())
