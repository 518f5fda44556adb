#!/usr/bin/env python3
"""Hashes of everything the engines draw and say, to prove that a speed-up changed no output byte.

Engine speed work (memos per position, fewer passes over the board, cached words) must leave every
board, listing, score and error exactly as it was, in every language, for every viewer. Tests check
what texts mean, not that they stayed byte for byte the same; this script does: it plays a fixed set
of seeded random games of both games (every Alien City edition and variant, Space Truckin' with 2 to
5 players) and writes, for every position, one line per language with a hash of the renderings for
each viewer (text, HTML, legal listing, one-tap groups, SVG), the legal moves (canonical and in the
reader's words), the score, the replay fields, and what ``push`` answers to a few wrong moves. Run
it before and after a change and compare the files: they must be identical. Languages are asked in
turn on the same state object, so a memo that forgot the language would show up as a difference.

Usage::

    .venv/bin/python bench/engine_golden.py [--out golden.txt] [--ac-games 40] [--st-games 20]
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: see bench/__init__.py
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.base import Game, MoveError, State, random_positions
from engine.i18n import using
from engine.registry import get_game
from pbem.i18n import LANGUAGES, translations

# Alien City's variants: editions crossed with the flags, some with a handicap.
AC_OPTIONS: tuple[dict[str, Any], ...] = (
    {"edition": "2.2"}, {"edition": "1.2"},
    {"edition": "2.2", "symmetric": True}, {"edition": "1.2", "location_bonus": True},
    {"edition": "2.2", "symmetric": True, "location_bonus": True},
    {"edition": "1.2", "handicap": {"white": {"reach": 3, "extra_claims": 1}}},
)
# Texts that are not moves, or moves no position allows, for what ``push`` answers.
WRONG = ("tower purple A1", "dome red Z9", "xyzzy", "tower red A1 claim B2", "dome black J10",
         "place A1 45", "swap A1 B2", "remove Z9", "pass", "")


def _digest(parts: list[str]) -> str:
    return hashlib.sha256("\x1e".join(parts).encode()).hexdigest()[:24]


def _answers(state: State, rng: random.Random) -> list[str]:
    """What ``push`` says to wrong and to legal-looking moves (on copies)."""
    out = []
    texts = [*rng.sample(WRONG, 3)]
    moves = state.legal_moves()
    if moves:
        move = state.move_text(moves[rng.randrange(len(moves))])
        texts += [move, move + " claim A1", move.replace("tower", "dome")]
    for text in texts:
        try:
            out.append(repr(state.copy().push(text)))
        except MoveError as exc:
            out.append(f"{type(exc).__name__}|{exc}|{exc.rule}|{exc.suggestions}")
    return out


def _position(game: Game, state: State, seed: int) -> str:
    """One position's hash over every language and viewer."""
    viewers: list[str | None] = [*state.seats, None]
    renderer = game.renderer
    parts = []
    for lang in LANGUAGES:
        with using(translations(lang, "engine")):
            for viewer in viewers:
                parts += [lang, str(viewer), state.render(viewer), state.render_html(viewer),
                          state.render_legal(viewer), repr(renderer.legal_groups(state, viewer))]
            moves = state.legal_moves()
            parts += [repr([state.move_text(m) for m in moves]),
                      repr([state.local_move_text(m) for m in moves])]
            score = state.score()
            parts += [repr(score.totals), score.text, repr(score.details), repr(score.winners),
                      repr(state.replay_info()), repr(state.to_move), repr(state.last_move)]
            parts += [renderer.svg_board(state, "p", f"ply {state.ply}")]
            if state.ply == 0:
                parts += [renderer.svg_defs(state, "p"), renderer.svg_legend(state, "p")]
            parts += _answers(state, random.Random(seed))
    return _digest(parts)


def _games(n_ac: int, n_st: int) -> Iterator[tuple[str, Game, dict[str, Any], int, int]]:
    alien, truckin = get_game("alien-city"), get_game("space-truckin")
    for i in range(n_ac):
        yield "alien-city", alien, AC_OPTIONS[i % len(AC_OPTIONS)], 2, 1000 + i
    for i in range(n_st):
        yield "space-truckin", truckin, {}, 2 + i % 4, 2000 + i


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("engine-golden.txt"))
    parser.add_argument("--ac-games", type=int, default=40)
    parser.add_argument("--st-games", type=int, default=20)
    args = parser.parse_args(argv)
    lines = []
    for name, game, options, players, seed in _games(args.ac_games, args.st_games):
        rng = random.Random(seed)
        for state in random_positions(game, options, players, rng):
            lines.append(f"{name} seed={seed} ply={state.ply} {_position(game, state, seed + state.ply)}")
    args.out.write_text("\n".join(lines) + "\n")
    print(f"{len(lines)} positions, digest {_digest(lines)} -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
