"""``pbem selfplay GAME --levels A,B`` and ``pbem analyse FILE``: the computer opponents on the command
line (matches between levels; a post-mortem of a finished game). Nothing here names a game: every
game offers its players through ``Game.computer``."""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path
from typing import Any

from engine import ComputerPlayer, Game, State, get_game
from engine.ai import LEVELS, Budget, Computer, player_entry
from engine.ai.analysis import review, swings
from engine.ai.match import TABLE_HEADER, Tally, play_game, tally_line
from engine.options import parse_option_words
from pbem.cli.common import UsageError, out, progress_bar
from pbem.record import load_record, new_record, write_record


class _Timed(ComputerPlayer):
    """Counts the moves of a player and the time they took."""

    def __init__(self, player: ComputerPlayer, clock: dict[str, float]):
        self.player = player
        self.level = player.level
        self.clock = clock

    def choose(self, state: State) -> Any:
        started = time.perf_counter()
        move = self.player.choose(state)
        self.clock["seconds"] += time.perf_counter() - started
        self.clock["moves"] += 1
        return move


def parse_levels(text: str, game: Game) -> list[int]:
    try:
        levels = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UsageError(f"--levels takes levels separated by commas, e.g. 3,1; not {text!r}") from None
    offered = ", ".join(map(str, game.computer_levels))
    if not game.computer_levels:
        raise UsageError(f"{game.title} has no computer player")
    bad = [x for x in levels if x not in game.computer_levels]
    if bad:
        raise UsageError(f"{game.title} has no computer level {bad[0]}: levels are {offered}")
    if not game.min_players <= len(levels) <= game.max_players:
        raise UsageError(f"{game.title} is for {game.min_players} to {game.max_players} players: "
                         f"name that many levels, e.g. --levels 3,1")
    return levels


def budget_of(args: argparse.Namespace) -> Budget | None:
    if args.budget is None and args.iterations is None:
        return None
    if args.budget is not None and args.budget <= 0:
        raise UsageError(f"--budget is seconds a move, more than 0; not {args.budget}")
    if args.iterations is not None and args.iterations < 1:
        raise UsageError(f"--iterations is at least 1, not {args.iterations}")
    return Budget(seconds=args.budget, iterations=args.iterations)


def cmd_selfplay_levels(args: argparse.Namespace, extra: list[str]) -> int:
    """Matches between computer levels: sides rotate from game to game (for two players they
    alternate), each setup played once in every rotation, so neither the first move nor a lucky
    setup favours a level."""
    game = get_game(args.game)
    options = game.normalize_options(parse_option_words(game, extra))
    levels = parse_levels(args.levels, game)
    budget = budget_of(args)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    n = len(levels)
    seats = game.seat_names(n)
    labels = [f"level {lv}" + (f" #{levels[:k].count(lv) + 1}" if levels.count(lv) > 1 else "")
              for k, lv in enumerate(levels)]
    tallies = [Tally() for _ in levels]
    clocks = [{"seconds": 0.0, "moves": 0.0} for _ in levels]
    folder = Path(args.output) if args.output else None
    started = time.perf_counter()
    with progress_bar("selfplay", args.games) as bar:
        for number in range(args.games):
            # Game g: seat j is played by entry (j + g) mod n.
            entry_of = {seat: (j + number) % n for j, seat in enumerate(seats)}
            players: dict[str, ComputerPlayer] = {
                seat: _Timed(game.computer(levels[k], budget, seed=seed * 1009 + number * 7 + k), clocks[k])
                for seat, k in entry_of.items()}
            result = play_game(game, options, players, seed * 7919 + number // n)
            for seat, k in entry_of.items():
                tallies[k].add(result, seat)
            if folder is not None:
                record = new_record(game, options, result.setup,
                                    {seat: player_entry(levels[k]) for seat, k in entry_of.items()})
                record["moves"] = result.entries
                folder.mkdir(parents=True, exist_ok=True)
                write_record(folder / f"{game.id_prefix}-levels-{seed}-{number + 1}.json", record)
            bar.update(1)
    elapsed = time.perf_counter() - started
    what = "default budgets" if budget is None else str(_describe_budget(budget))
    out(f"{args.games} games of {game.title}, levels {args.levels} ({what}), seed {seed}, "
        f"{elapsed:.1f} s")
    out(TABLE_HEADER)
    for k, label in enumerate(labels):
        out(tally_line(label, tallies[k]))
    out("")
    for k, label in enumerate(labels):
        moves = clocks[k]["moves"]
        per_move = clocks[k]["seconds"] / moves if moves else 0.0
        out(f"{label}: {LEVELS[levels[k]].description}; {per_move:.3f} s a move")
    return 0


def _describe_budget(budget: Budget) -> str:
    parts = []
    if budget.seconds is not None:
        parts.append(f"{budget.seconds:g} s a move")
    if budget.iterations is not None:
        parts.append(f"at most {budget.iterations} iterations")
    return ", ".join(parts)


def cmd_analyse(args: argparse.Namespace, extra: list[str]) -> int:
    record, game = load_record(Path(args.file))
    if args.level not in game.computer_levels or args.level < 3:
        raise UsageError("--level is a searching level: 3 or 4")
    budget = budget_of(args) or Budget(seconds=1.0)
    player = game.computer(args.level, budget, seed=args.seed)
    assert isinstance(player, Computer)
    # The computer judges positions only; the pile of Space Truckin' is not needed for that.
    setup = game.redact_setup(record["setup"])
    reviews = review(game, record.get("options"), setup, record["moves"], player)
    out(f"{game.title}: {Path(args.file).name}")
    out(f"judged by the computer at level {args.level} ({_describe_budget(budget)} a position).")
    out("For each move: the mover's expected result after the computer's choice")
    out("('best') and after the move played (100 % a sure win, 50 % even, 0 % a")
    out("sure loss), and what the move cost against the computer's choice.")
    out("")
    out(f"{'ply':>3} {'seat':<6} {'move':<24} {'best':>5} {'played':>6} {'cost':>5}  computer's choice")
    for r in reviews:
        if r.best is None or r.before is None or r.after is None:
            out(f"{r.ply:>3} {r.seat:<6} {r.move:<24} {'':>5} {'':>6} {'':>5}  (forced)")
            continue
        choice = "=" if r.best == r.move else r.best
        out(f"{r.ply:>3} {r.seat:<6} {r.move:<24} {r.before:>5.0%} {r.after:>6.0%} "
            f"{100 * r.change:>+5.0f}  {choice}")
    worst = swings(reviews, args.top)
    out("")
    if not worst:
        out("No move cost anything against the computer's choice.")
    else:
        out("Biggest swings:")
    for r in worst:
        out(f"  ply {r.ply}, {r.seat}: {r.move} ({r.after:.0%}, {100 * r.change:+.0f})")
        out(f"    the computer's choice: {r.best} ({r.before:.0%})")
    return 0


def register_all(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "analyse", help="the computer's post-mortem of a game record",
        description="For each move of a game record, the computer's judgement of the position "
                    "before and after it, its own choice, and the biggest swings.")
    p.add_argument("file", help="a finished game's record (pbem-record JSON)")
    p.add_argument("--level", type=int, default=3, help="searching level to judge with (3 or 4)")
    p.add_argument("--budget", type=float, metavar="SECONDS", help="search time a position (default 1)")
    p.add_argument("--iterations", type=int, help="cap on search iterations a position")
    p.add_argument("--seed", type=int, default=0, help="seed of the search (default 0)")
    p.add_argument("--top", type=int, default=5, help="how many swings to list (default 5)")
    p.set_defaults(func=cmd_analyse)


def add_selfplay_options(p: argparse.ArgumentParser) -> None:
    """The computer-match options of ``pbem selfplay`` (the parser lives with the record commands)."""
    p.add_argument("--levels", metavar="A,B", help="computer levels, one per seat (e.g. 3,1); with it, "
                   "selfplay plays matches and prints a results table")
    p.add_argument("--budget", type=float, metavar="SECONDS",
                   help="search time per move for levels 3 and 4 (default: 2 for level 3, 10 for 4)")
    p.add_argument("--iterations", type=int, help="cap on search iterations per move (deterministic)")


__all__ = ["add_selfplay_options", "cmd_selfplay_levels", "register_all"]
