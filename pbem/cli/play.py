"""``pbem new|show|move|score|replay|selfplay``: game records on the command line, no server needed."""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from engine import MoveError, get_game
from engine.options import parse_option_words
from pbem.cli.common import UsageError, game_help, out
from pbem.cli.computer import add_selfplay_options, cmd_selfplay_levels
from pbem.clocks import show as clock_show
from pbem.record import (
    append_move,
    describe_action,
    draw_chances,
    load_record,
    new_record,
    positions_with_actions,
    replay_json,
    replay_record,
    write_record,
)


def _now() -> datetime:
    return datetime.now(UTC)


# --- record commands ---------------------------------------------------------------------------------

def cmd_new(args: argparse.Namespace, extra: list[str]) -> int:
    game = get_game(args.game)
    raw = parse_option_words(game, extra)
    options = game.normalize_options(raw)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**63)
    rng = random.Random(seed)
    n = args.players or game.min_players
    seats = game.seat_names(n)
    setup = game.create_setup(options, rng, n)
    players = {}
    for spec in args.player or []:
        seat, _, who = spec.partition("=")
        if seat not in seats or not who:
            raise UsageError(f"--player takes SEAT=NAME <EMAIL> with SEAT one of {', '.join(seats)}")
        name, _, email = who.partition("<")
        players[seat] = {"name": name.strip(), "email": email.rstrip(">").strip()}
    record = new_record(game, options, setup, players)
    state = game.start(options, setup)
    draw_chances(game, state, record, _now())
    write_record(Path(args.output), record)
    out(f"{game.title}: new game written to {args.output} (seed {seed})")
    out(state.render(state.to_move))
    return 0


def cmd_show(args: argparse.Namespace, extra: list[str]) -> int:
    record, game = load_record(Path(args.file))
    state = replay_record(record, game)
    viewer = args.viewer or state.to_move
    out(state.render(viewer))
    out("")
    out(state.render_legal(viewer))
    return 0


def cmd_move(args: argparse.Namespace, extra: list[str]) -> int:
    path = Path(args.file)
    record, game = load_record(path)
    state = replay_record(record, game)
    if state.is_over:
        out("The game is over; no more moves.")
        return 1
    if args.seat and args.seat != state.to_move:
        out(f"It is {state.to_move}'s turn, not {args.seat}'s.")
        return 1
    text = " ".join(args.move)
    try:
        canonical, notes = append_move(game, state, record, text, _now())
    except MoveError as exc:
        out(f"Not applied: {exc}")
        return 1
    write_record(path, record)
    out(f"Applied: {canonical}")
    for note in notes:
        out(note)
    out(state.render(state.to_move))
    return 0


def cmd_score(args: argparse.Namespace, extra: list[str]) -> int:
    record, game = load_record(Path(args.file))
    state = replay_record(record, game)
    score = state.score()
    out(score.text)  # the totals are in the text already; the status line only says what they mean
    if state.is_over:
        winners = score.winners
        out("Result: draw" if len(winners) > 1 else f"Result: {winners[0]} wins")
    else:
        out(f"Not over: {state.to_move} to move; these are the scores if the game ended now.")
    return 0


def cmd_replay(args: argparse.Namespace, extra: list[str]) -> int:
    record, game = load_record(Path(args.file))
    for state, actions in positions_with_actions(record, game):
        if args.ply is not None and state.ply != args.ply:
            continue
        if args.json:
            line = replay_json(state)
            if actions:
                line["actions"] = actions
            out(json.dumps(line, separators=(", ", ": ")))
        else:
            title = f"=== ply {state.ply}"
            if state.last_move:
                title += f": {state.last_move}"
            out(title + " ===")
            out(state.render(None))
            for action in actions:
                out(describe_action(action))
        if args.ply is not None:
            return 0
    if args.ply is not None:
        raise UsageError(f"--ply {args.ply}: the record has plies 0 to {replay_record(record, game).ply}")
    return _replay_clock(record, args.json, args.clock)


def _replay_clock(record: dict, as_json: bool, clock_line: bool) -> int:
    """After the positions, the move clocks: every event, its bank and deadline recomputed from the
    times (in JSON, one more line only when asked, so that the last line stays the last position);
    exit 1 when a stored value is not what the times give."""
    if not record.get("clock_log"):
        return 0
    lines, problems = clock_show.clock_lines(record)
    if as_json:
        if clock_line:
            out(json.dumps(clock_show.clock_json(record), separators=(", ", ": ")))
    else:
        out("=== clock ===")
        for text in lines:
            out(text)
        out(clock_show.summary(record))
    for problem in problems:
        print(f"pbem replay: {problem}", file=sys.stderr)
    return 1 if problems else 0


def cmd_selfplay(args: argparse.Namespace, extra: list[str]) -> int:
    if args.levels:
        return cmd_selfplay_levels(args, extra)
    game = get_game(args.game)
    options = game.normalize_options(parse_option_words(game, extra))
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    rng = random.Random(seed)
    n = args.players or game.min_players
    show = args.games == 1 and not args.quiet
    started = time.perf_counter()
    wins: dict[str, int] = {}
    plies = 0
    for number in range(args.games):
        setup = game.create_setup(options, rng, n)
        record = new_record(game, options, setup)
        state = game.start(options, setup)
        clock_rng = random.Random(rng.random())
        now = datetime(2026, 1, 1, tzinfo=UTC)
        draw_chances(game, state, record, now.replace(second=clock_rng.randrange(60)))
        if show:
            out(f"{game.title} self-play, seed {seed}")
            out(state.render(None))
        while not state.is_over:
            seat = state.to_move
            move = state.random_move(rng)
            text = state.move_text(move)
            notes = state.push(move)
            record["moves"].append({"seat": seat, "move": text})
            notes += draw_chances(game, state, record, now.replace(second=clock_rng.randrange(60)))
            if show:
                out(f"\n=== ply {state.ply}: {state.last_move} ===")
                for note in notes:
                    out(note)
                out(state.render(None))
        score = state.score()
        plies += state.ply
        key = "draw" if len(score.winners) > 1 else score.winners[0]
        wins[key] = wins.get(key, 0) + 1
        if show:
            out("")
            out(score.text)
        if args.output:
            folder = Path(args.output)
            folder.mkdir(parents=True, exist_ok=True)
            write_record(folder / f"{game.id_prefix}-selfplay-{seed}-{number + 1}.json", record)
    elapsed = time.perf_counter() - started
    if not show:
        rate = args.games / elapsed if elapsed else float("inf")
        out(f"{args.games} games of {game.title} (seed {seed}) in {elapsed:.2f} s: "
             f"{rate:.1f} games/s, {plies / max(args.games, 1):.1f} plies per game")
        out("results: " + ", ".join(f"{k} {v}" for k, v in sorted(wins.items())))
    return 0

RECORD_HELP = "the game record file (JSON)"


def register_all(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("new", help="start a game record",
                       description="Start a new game record. Game options follow the game name, e.g. "
                                   "--edition 1.2 --symmetric --location-bonus --handicap white:3:1.",
                       epilog=game_help(), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("game", help="the game to play (see the list below)")
    p.add_argument("-o", "--output", required=True, help="record file to write")
    p.add_argument("--seed", type=int, help="random seed for the setup (default: random)")
    p.add_argument("--players", type=int, help="number of players (default: the minimum)")
    p.add_argument("--player", action="append", metavar="SEAT=NAME <EMAIL>", help="name a player")
    p.set_defaults(func=cmd_new, takes_options=True)

    p = sub.add_parser("show", help="board, supplies and legal moves of a record")
    p.add_argument("file", help=RECORD_HELP)
    p.add_argument("--as", dest="viewer", metavar="SEAT", help="show as this seat sees it")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("move", help="apply a move and rewrite the record atomically")
    p.add_argument("file", help=RECORD_HELP)
    p.add_argument("move", nargs="+", help='e.g. "tower red C4 claim C4"')
    p.add_argument("--seat", help="refuse unless it is this seat's turn")
    p.set_defaults(func=cmd_move)

    p = sub.add_parser("score", help="scores with the full breakdown")
    p.add_argument("file", help=RECORD_HELP)
    p.set_defaults(func=cmd_score)

    p = sub.add_parser("replay", help="print every position of a record (or one, with --ply), then its "
                                      "move clocks recomputed from the times (exit 1 if they disagree)")
    p.add_argument("file", help=RECORD_HELP)
    p.add_argument("--ply", type=int, help="only this ply (0 = before the first move)")
    p.add_argument("--json", action="store_true", help="one JSON object per position")
    p.add_argument("--clock", action="store_true", help="with --json: one more line, the clock's events "
                                                        "with their recomputed banks and deadlines")
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("selfplay", help="random legal games, or matches between computer levels",
                       description="Play random legal games for demos and benchmarks; with --levels, "
                                   "matches between computer levels (e.g. --levels 3,1 --games 20 "
                                   "--budget 0.5) and a results table. Game options follow the game "
                                   "name, as for new.",
                       epilog=game_help(), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("game", help="the game to play (see the list below)")
    p.add_argument("--games", type=int, default=1, help="how many games (default: %(default)s)")
    p.add_argument("--seed", type=int, help="random seed (default: random, printed)")
    p.add_argument("--players", type=int, help="number of players (default: the minimum)")
    p.add_argument("--quiet", action="store_true", help="summary only, even for one game")
    p.add_argument("-o", "--output", help="write each game's record into this folder")
    add_selfplay_options(p)
    p.set_defaults(func=cmd_selfplay, takes_options=True)


__all__ = ["register_all"]
