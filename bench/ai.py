"""Strength and speed of the computer opponents, as reported in the README.

    .venv/bin/python bench/ai.py                      # both games, default counts and budgets
    .venv/bin/python bench/ai.py --game alien-city --games 200 --games4 60 --budget3 0.1 --budget4 0.5

Each level plays the one below (and level 3 plays level 1) on both cores, each setup twice with the
sides swapped. For each pairing: wins, draws, losses of the higher level, its score rate with a 95 %
(Wilson) interval, and the Elo difference that implies. Targets (Alien City): each level scores at
least 70 % against the one below, and level 3 at least 95 % against level 1.

Budgets are per move and are time budgets, as a player gets them (levels 1 and 2 do not search);
the iterations the searches reached are printed too, since the machine's load changes them.
Playout speed is measured on one core as CPU time (``time.process_time``), so that other load on
the machine does not count: random Alien City playouts from the first move to the final score.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import random
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine import ComputerPlayer, State, get_game
from engine.ai import Budget, Computer
from engine.ai.match import TABLE_HEADER, Tally, play_game, tally_line

# Each level against the one below; in Alien City also level 3 against level 1 (a target there).
PAIRINGS = {"alien-city": ((2, 1), (3, 2), (4, 3), (3, 1)), "space-truckin": ((2, 1), (3, 2), (4, 3))}
TARGETS = {(2, 1): 0.70, (3, 2): 0.70, (4, 3): 0.70, (3, 1): 0.95}
PLAYOUT_GOAL = 500.0  # random Alien City playouts a second on one core


def machine() -> str:
    """What the numbers were measured on (the load of the machine is not in it: see the times)."""
    uname = platform.uname()
    return (f"{os.cpu_count()} cores, {uname.machine}, {uname.system} {uname.release}, "
            f"Python {platform.python_version()}, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, "
            f"load average {os.getloadavg()[0]:.1f}")


# --- playout speed ---------------------------------------------------------------------------------

def alien_city_playouts(seconds: float) -> tuple[float, float]:
    """(random playouts a second, search playouts a second): whole games from the first move to the
    final totals. Random: a uniformly random legal build and, with a cap in hand, a random claim a
    third of the time. Search: level 3's playout policy (claims the tower worth most)."""
    game = get_game("alien-city")
    options = game.normalize_options({})
    knowledge = game.computer(3).knowledge
    rates = []
    for policy in ("random", "search"):
        rng = random.Random(1)
        done = 0
        started = time.process_time()
        while time.process_time() - started < seconds:
            state = game.start(options, game.create_setup(options, rng))
            if policy == "search":
                knowledge.rollout(state, rng)
                done += 1
                continue
            while not state.is_over:
                piece, lot = state.sample_build(rng)
                claim = -1
                if state.caps_left(state.to_move) and rng.random() < 1 / 3:
                    targets = state.claimable_lots()
                    if targets:
                        claim = targets[int(rng.random() * len(targets))]
                state.push_build(piece, lot, claim)
            state.totals()
            done += 1
        rates.append(done / (time.process_time() - started))
    return rates[0], rates[1]


def space_truckin_playouts(seconds: float) -> float:
    """Random playouts (random placements and ships, draws from the unseen tiles) of 2-player
    games from the first move, played to the end, a second. The search no longer plays them (it
    values the position at each leaf: see engine/space_truckin/ai.py); kept as the engine's speed."""
    game = get_game("space-truckin")
    knowledge = game.computer(3).knowledge
    knowledge.horizon = 10**6
    rng = random.Random(1)
    done = 0
    started = time.process_time()
    while time.process_time() - started < seconds:
        state = game.start({}, game.create_setup({}, rng, 2))
        knowledge.rollout(state, rng)
        done += 1
    return done / (time.process_time() - started)


# --- matches -------------------------------------------------------------------------------------

class Timed(ComputerPlayer):
    def __init__(self, player: Computer, stats: dict[str, float]):
        self.player, self.level, self.stats = player, player.level, stats

    def choose(self, state: State) -> Any:
        started = time.perf_counter()
        move = self.player.choose(state)
        self.stats["seconds"] += time.perf_counter() - started
        self.stats["moves"] += 1
        if self.player.last is not None and self.level >= 3:
            self.stats["iterations"] += self.player.last.iterations
            self.player.last = None
        return move


def one_game(task: tuple[str, int, int, float, float, int]) -> tuple[Any, str, dict[int, dict[str, float]]]:
    """Game ``index`` of a pairing: games come in pairs on the same setup with the sides swapped
    (the higher level has the first seat in even games), so a lucky setup helps both levels once."""
    name, high, low, budget_high, budget_low, index = task
    game = get_game(name)
    seats = game.seat_names(2)
    stats = {lv: {"seconds": 0.0, "moves": 0.0, "iterations": 0.0} for lv in (high, low)}
    a = Timed(game.computer(high, Budget(seconds=budget_high), seed=2 * index), stats[high])
    b = Timed(game.computer(low, Budget(seconds=budget_low), seed=2 * index + 1), stats[low])
    high_seat = seats[index % 2]
    players: dict[str, ComputerPlayer] = {high_seat: a, seats[1 - index % 2]: b}
    result = play_game(game, {}, players, seed=10_000 + index // 2)
    return result, high_seat, stats


@dataclass
class Pairing:
    high: int
    low: int
    tally: Tally = field(default_factory=Tally)
    seconds: float = 0.0


def run_game(name: str, games: int, games4: int, budgets: dict[int, float], jobs: int
             ) -> tuple[list[Pairing], dict[int, dict[str, float]]]:
    pairings = [Pairing(h, low) for h, low in PAIRINGS[name] if h in budgets and low in budgets]
    per_level = {lv: {"seconds": 0.0, "moves": 0.0, "iterations": 0.0} for lv in budgets}
    with multiprocessing.Pool(jobs) as pool:
        for pairing in pairings:
            count = games4 if pairing.high == 4 else games
            tasks = [(name, pairing.high, pairing.low, budgets[pairing.high], budgets[pairing.low], i)
                     for i in range(count)]
            started = time.perf_counter()
            for result, seat, stats in pool.imap_unordered(one_game, tasks):
                pairing.tally.add(result, seat)
                for lv, s in stats.items():
                    for key, value in s.items():
                        per_level[lv][key] += value
            pairing.seconds = time.perf_counter() - started
            print(f"  {name}: {pairing.high} vs {pairing.low}: {count} games in "
                  f"{pairing.seconds:.0f} s", file=sys.stderr, flush=True)
    return pairings, per_level


def report(title: str, pairings: list[Pairing], per_level: dict[int, dict[str, float]],
           budgets: dict[int, float], targets: bool) -> bool:
    print(f"\n## {title}")
    print(TABLE_HEADER)
    met = True
    for p in pairings:
        print(tally_line(f"{p.high} vs {p.low}", p.tally))
        goal = TARGETS.get((p.high, p.low))
        if targets and goal is not None and p.tally.rate < goal:
            met = False
    print()
    for lv in sorted(per_level):
        s = per_level[lv]
        moves = s["moves"] or 1.0
        line = f"level {lv}: {s['seconds'] / moves:.3f} s a move"
        if lv >= 3:
            line += f" (budget {budgets[lv]:g} s; {s['iterations'] / moves:.0f} search iterations)"
        print(line)
    print("time: " + ", ".join(f"{p.high} vs {p.low} {p.seconds:.0f} s" for p in pairings))
    if targets:
        print("targets (each level >= 70 % against the one below, 3 vs 1 >= 95 %): "
              + ("met" if met else "NOT met"))
    return met


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", choices=("all", "alien-city", "space-truckin"), default="all")
    parser.add_argument("--games", type=int, default=200, help="games per pairing (default 200)")
    parser.add_argument("--games4", type=int, default=60,
                        help="games of the level 4 pairing (default 60; Space Truckin' 40)")
    parser.add_argument("--budget3", type=float, default=0.2, help="level 3 seconds a move (default 0.2)")
    parser.add_argument("--budget4", type=float, default=1.0, help="level 4 seconds a move (default 1)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--playout-seconds", type=float, default=5.0)
    parser.add_argument("--skip-matches", action="store_true", help="measure playout speed only")
    parser.add_argument("--max-level", type=int, default=4, choices=(2, 3, 4),
                        help="play the pairings up to this level only")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    print(f"Machine: {machine()}")
    ok = True
    if args.game in ("all", "alien-city"):
        rand, policy = alien_city_playouts(args.playout_seconds)
        print(f"Alien City playouts on one core: {rand:.0f}/s random (goal >= {PLAYOUT_GOAL:.0f}), "
              f"{policy:.0f}/s with level 3's playout policy")
        ok = ok and rand >= PLAYOUT_GOAL
    if args.game in ("all", "space-truckin"):
        print(f"Space Truckin' random playouts on one core (2 players, to the end): "
              f"{space_truckin_playouts(args.playout_seconds):.0f}/s")
    budgets = {lv: b for lv, b in {1: 0.0, 2: 0.0, 3: args.budget3, 4: args.budget4}.items()
               if lv <= args.max_level}
    if not args.skip_matches:
        for name, title in (("alien-city", "Alien City"), ("space-truckin", "Space Truckin'")):
            if args.game not in ("all", name):
                continue
            games4 = args.games4 if name == "alien-city" else min(args.games4, 40)
            pairings, per_level = run_game(name, args.games, games4, budgets, args.jobs)
            counts = f"{args.games} games a pairing, {games4} for level 4"
            met = report(f"{title} ({counts}; {args.jobs} jobs)", pairings, per_level, budgets,
                         targets=name == "alien-city")
            ok = ok and met
    print(f"\nTotal time: {time.perf_counter() - started:.0f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
