#!/usr/bin/env python3
"""The engine's CPU per move as the processor spends it, without the processor around it.

``bench/processor_cpu.py`` measures a whole move in the processor, of which the engine is about a
fifth; this script times only the engine's part, so a change to it shows above the machine's
noise. For each move it does what the processor asks of the engine (counted with cProfile on
``processor_cpu.py``): copy the cached state, ``push`` the move's text, then, for the mail to the
seat now to move, ``score`` (its totals), the text and HTML boards, the legal listing, its one-tap
groups and ``legal_moves``, and a copy for the state cache. The position before the move was
drawn already (its mail went out), the position after was not.

Moves are taken from seeded random Alien City games: ``--plies first`` times only each game's
first move (what ``processor_cpu.py`` times), ``all`` every move of the games.

Usage::

    .venv/bin/python bench/engine_move_mail.py [--games 200] [--plies first|all] [--repeat 5]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

if not __package__:  # run as a script: see bench/__init__.py
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.alien_city import AlienCity, AlienCityState
from engine.i18n import using
from pbem.i18n import translations

GAME = AlienCity()


def _mail_work(state: AlienCityState) -> None:
    """What the processor asks of a position it announces to the seat on move."""
    viewer = state.to_move
    state.score()
    state.render(viewer)
    state.render_html(viewer)
    if viewer is not None:
        state.render_legal(viewer)
        GAME.renderer.legal_groups(state, viewer)
        state.legal_moves()


def moves(games: int, plies: str, first_seed: int = 0) -> list[tuple[AlienCityState, str]]:
    """(state before, move text) pairs; the state before has its mail drawn. Only moves from an
    even ply are taken, so no position after a timed move was drawn while preparing (drawings are
    shared between states at the same position); each run takes games of its own seeds, for the
    same reason."""
    out = []
    options = GAME.normalize_options({})
    for seed in range(first_seed, first_seed + games):
        rng = random.Random(seed)
        state = GAME.start(options, GAME.create_setup(options, rng))
        while not state.is_over:
            move = state.random_move(rng)
            if state.ply % 2 == 0:
                before = state.copy()
                _mail_work(before)
                out.append((before, state.move_text(move)))
            state.push(move)
            if plies == "first":
                break
    return out


def run(pairs: list[tuple[AlienCityState, str]]) -> float:
    """CPU ms per move over all pairs, once."""
    work = []
    start = time.thread_time()
    for cached, text in pairs:
        state = cached.copy()
        state.push(text)
        _mail_work(state)
        work.append(state.copy())
    return (time.thread_time() - start) * 1000 / len(pairs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--plies", choices=("first", "all"), default="first")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    with using(translations("en", "engine")):
        results = []
        for run_number in range(args.repeat):
            pairs = moves(args.games, args.plies, run_number * args.games)
            results.append(run(pairs))
    print(f"engine CPU per move ({args.plies} moves of {args.games} games, {len(pairs)} moves): "
          f"median {statistics.median(results):.3f} ms, runs {' '.join(f'{r:.3f}' for r in results)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
