"""Mail scenario 1: throughput through the embedded SMTP listener (``bench/mail.py --only smtp``).

N games are set up by mail (``new`` and ``accept``; untimed). Then the first move of every game is
submitted as a player's reply, over a few parallel SMTP connections that each send many messages, and
the clock runs until both replies of every move (the mover's confirmation and the opponent's "Your
move") reached the relay, an SMTP sink. Reported: moves per second, plus where the time went
(per-stage latencies and CPU seconds per daemon thread). Goal: >= 100 moves/s.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.harness.daemon import PySpy, start_with_relay
from bench.harness.players import answer, make_tables, raw_bytes, setup_games, smtp_submit, smtp_submit_raw
from bench.harness.report import own_cpu, rounded, say, summary
from bench.harness.sink import all_replied
from bench.harness.stages import normalise_id, stage_split

NAME = "smtp"
TITLE = "SMTP throughput"
GOAL_MOVES_PER_SECOND = 100.0


def table_row(smtp: dict[str, Any]) -> str:
    return (f"| SMTP listener → replies at relay, {smtp['moves']} moves over "
            f"{smtp['connections']} connections | **{smtp['moves_per_second']} moves/s** "
            f"({smtp['elapsed_seconds']} s) | ≥ {GOAL_MOVES_PER_SECOND:g} moves/s | "
            f"{'yes' if smtp['goal_met'] else 'NO'} |")


def run(args: argparse.Namespace, workdir: Path, cleanup: list[Callable[[], None]]) -> dict[str, Any]:
    from tests.services.requirements import free_port

    sink, daemon, data_dir = start_with_relay(
        "smtp", {"smtp": {"enabled": True, "host": "127.0.0.1", "port": free_port()}}, workdir,
        args.log_level, cleanup)
    port = daemon.smtp_port
    assert port

    say(f"[smtp] setting up {args.games} games by mail ...")
    started = time.monotonic()
    tables = make_tables(args.games, "s")
    your_move = setup_games(tables, lambda ms: smtp_submit(port, ms, args.connections), sink,
                            timeout=max(120.0, args.games * 0.5))
    setup_seconds = time.monotonic() - started

    players: dict[str, Any] = {}
    moves: dict[str, dict[str, Any]] = {}
    prepared = []
    for game, arrival in sorted(your_move.items()):
        reply = answer(arrival, players)
        assert reply is not None, arrival.subject
        key = (game, (arrival.ply or 0) + 1)
        moves[normalise_id(reply["Message-ID"])] = {"key": key, "sent": math.nan, "replies": []}
        prepared.append((reply["From"].addresses[0].addr_spec, [reply["To"].addresses[0].addr_spec],
                         raw_bytes(reply)))
    by_key = {m["key"]: m for m in moves.values()}
    say(f"[smtp] setup took {setup_seconds:.1f} s; now {len(prepared)} moves over "
        f"{args.connections} connections ...")

    base = sink.count()

    spy = PySpy(daemon.pid, Path(args.py_spy) / "smtp.txt") if args.py_spy else None
    if spy:
        cleanup.append(spy.stop)
    daemon.call("mark", args.profile and str(Path(args.profile) / "smtp"))
    cpu_before = own_cpu()
    t0 = time.monotonic()
    timings = smtp_submit_raw(port, prepared, args.connections)
    submitted = time.monotonic()
    arrivals = sink.wait_until(all_replied(base, by_key), max(120.0, len(prepared) * 0.5), "all replies")
    driver_cpu = own_cpu() - cpu_before
    sink.wait_quiet(0.5, 10.0)  # the sender marks the last rows sent after the sink has them
    report = daemon.call("report", timeout=120)
    if spy:
        report["profiles"]["py-spy"] = spy.stop()

    for move, (before, _after) in zip(moves.values(), timings, strict=True):
        move["sent"] = before
    extra = [a for a in arrivals[base:] if (a.game, a.ply) not in by_key]
    for a in arrivals[base:]:
        move = by_key.get((a.game, a.ply))
        if move is not None:
            move["replies"].append(a.at)
    last_reply = max(max(m["replies"]) for m in moves.values())
    elapsed = last_reply - t0
    split = stage_split(report, data_dir / "pbem.sqlite3", moves)
    accept_ends = sorted(e[1] for e in report["events"]["accept"] if e[3])
    proc_ends = sorted(e[1] for e in report["events"]["process"])
    reply_times = sorted(t for m in moves.values() for t in m["replies"])
    result = {
        "games": len(tables),
        "moves": len(moves),
        "connections": args.connections,
        "setup_seconds": round(setup_seconds, 2),
        "elapsed_seconds": round(elapsed, 3),
        "moves_per_second": round(len(moves) / elapsed, 1),
        "goal_moves_per_second": GOAL_MOVES_PER_SECOND,
        "goal_met": len(moves) / elapsed >= GOAL_MOVES_PER_SECOND,
        "timeline_seconds": {
            "all_submitted_250": round(submitted - t0, 3),
            "last_stored": round(accept_ends[-1] - t0, 3) if accept_ends else None,
            "last_processed": round(proc_ends[-1] - t0, 3) if proc_ends else None,
            "first_reply_at_sink": round(reply_times[0] - t0, 3),
            "last_reply_at_sink": round(reply_times[-1] - t0, 3),
        },
        "submit_250_seconds": rounded(summary([b - a for a, b in timings])),
        "unexpected_replies": len(extra),
        "driver_cpu_seconds": round(driver_cpu, 3),
        **split,
        "log_problems": daemon.errors_in_log()[:10],
    }
    daemon.stop()
    sink.stop()
    return result

