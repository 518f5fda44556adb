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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.space_truckin import Place, SpaceTruckin

GAME = SpaceTruckin()
PLACEMENT_GOAL_MS = 2.0
GAMES_GOAL_PER_S = 20.0


def mid_game(seed: int, ply: int = 40):
    """A 2-player position after ``ply`` random moves, with a space tile drawn and waiting."""
    rng = random.Random(seed)
    setup = GAME.create_setup({}, rng, 2)
    state = GAME.start({}, setup)
    while not state.is_over:
        if state.pending_chance():
            state.apply_chance(GAME.draw_chance(state, setup, rng.randrange(60)))
            continue
        if state.ply >= ply and state.drawn_tile and not state.drawn_tile.startswith("blackhole"):
            return state
        state.push(state.random_move(rng))
    return None


def bench_placements(positions: int = 30, repeat: int = 20) -> dict[str, float]:
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
    return {"median_ms": statistics.median(samples) * 1000,
            "p95_ms": sorted(samples)[int(len(samples) * 0.95)] * 1000,
            "mean_placements": statistics.mean(sizes),
            "listing_median_ms": statistics.median(listing) * 1000}


def random_game(seed: int) -> int:
    rng = random.Random(seed)
    setup = GAME.create_setup({}, rng, 2)
    state = GAME.start({}, setup)
    while not state.is_over:
        if state.pending_chance():
            state.apply_chance(GAME.draw_chance(state, setup, rng.randrange(60)))
        else:
            state.push(state.random_move(rng))
    return state.ply


def bench_games(seconds: float = 5.0) -> dict[str, float]:
    start = time.perf_counter()
    games = plies = 0
    while time.perf_counter() - start < seconds:
        plies += random_game(1000 + games)
        games += 1
    elapsed = time.perf_counter() - start
    return {"games_per_s": games / elapsed, "games": games, "mean_plies": plies / games}


def main() -> int:
    placements = bench_placements()
    games = bench_games()
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
