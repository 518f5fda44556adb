"""Alien City engine speed, measured against the goals the server was sized for.

Goals (2-core machine): listing the legal builds of a mid-game position takes at most 0.5 ms
(median), because every reply mail and every ``push`` needs it; the full listing with the
game-ending marks (``legal_moves`` + ``ending_moves``) at most 5 ms; and complete random games run at
50 per second or more, so property tests and self-play stay quick.

Positions are timed from cold (``clear_cache``): the street analysis is part of the measured cost.
Run directly: ``python bench/engine_alien_city.py``.
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
from engine.alien_city import AlienCity, AlienCityState

GAME = AlienCity()
OPTIONS = GAME.normalize_options({})
LEGAL_GOAL_MS = 0.5
LISTING_GOAL_MS = 5.0
GAMES_GOAL_PER_S = 50.0


def mid_game_positions(games: int = 40, first_ply: int = 10, last_ply: int = 30
                       ) -> list[AlienCityState]:
    """Positions at plies 10-30 of random games (with random claims)."""
    out = []
    for seed in range(games):
        rng = random.Random(seed)
        state = GAME.start(OPTIONS, GAME.create_setup(OPTIONS, rng))
        while not state.is_over:
            if first_ply <= state.ply <= last_ply:
                out.append(state.copy())
            state.push(state.random_move(rng))
    return out


def _cold_median(positions: list[AlienCityState], work: Callable[[AlienCityState], object],
                 repeat: int = 3) -> tuple[float, float]:
    """Median and p95 ms of ``work`` on each position with its caches cleared first, so that the
    street analysis is part of what is measured."""
    samples = []
    for state in positions:
        for _ in range(repeat):
            state.clear_cache()
            start = time.perf_counter()
            work(state)
            samples.append(time.perf_counter() - start)
    return median_p95_ms(samples)


def random_game(seed: int) -> int:
    """One complete game with random moves (and claims); its length, for the mean."""
    rng = random.Random(seed)
    state = GAME.start(OPTIONS, GAME.create_setup(OPTIONS, rng))
    while not state.is_over:
        state.push(state.random_move(rng))
    return state.ply


def run(report: Callable[[str], object] = print) -> dict[str, float]:
    """Measure, print a small table through ``report``, and return the numbers."""
    positions = mid_game_positions()
    legal_med, legal_p95 = _cold_median(positions, lambda s: s.legal_moves())
    full_med, full_p95 = _cold_median(positions, lambda s: (s.legal_moves(), s.ending_moves()))
    mail_med, mail_p95 = _cold_median(positions, lambda s: s.render_legal(s.to_move), repeat=1)
    games = games_per_second(random_game, 10_000)
    sizes = statistics.mean(len(s.legal_moves()) for s in positions)
    rows = [
        ("legal builds, mid-game (ms)", legal_med, legal_p95, f"<= {LEGAL_GOAL_MS}",
         legal_med <= LEGAL_GOAL_MS),
        ("legal + ending marks (ms)", full_med, full_p95, f"<= {LISTING_GOAL_MS}",
         full_med <= LISTING_GOAL_MS),
        ("render_legal for a mail (ms)", mail_med, mail_p95, "", True),
        ("random games per second", games["games_per_s"], float("nan"), f">= {GAMES_GOAL_PER_S}",
         games["games_per_s"] >= GAMES_GOAL_PER_S),
    ]
    report(f"Alien City engine: {len(positions)} positions (plies 10-30 of 40 random games), "
           f"{sizes:.0f} legal builds on average; {games['games']} games of "
           f"{games['mean_plies']:.1f} moves")
    report(f"{'measure':<30} {'median':>9} {'p95':>9}  {'goal':<8} result")
    for name, median, p95, goal, ok in rows:
        p95_text = "" if p95 != p95 else f"{p95:9.3f}"
        report(f"{name:<30} {median:9.3f} {p95_text:>9}  {goal:<8} {'ok' if ok else 'MISSED'}")
    return {"legal_median_ms": legal_med, "legal_p95_ms": legal_p95,
            "listing_median_ms": full_med, "listing_p95_ms": full_p95,
            "render_legal_median_ms": mail_med, "games_per_s": games["games_per_s"],
            "ok": all(ok for *_, ok in rows)}


def main() -> int:
    return 0 if run(print)["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
