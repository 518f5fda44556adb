#!/usr/bin/env python3
"""Scheduler benchmark: what one scheduler run costs with many games in progress.

The scheduler role runs once a minute (``pbem.community.scheduler``): deadlines, expired
challenges, reminders, digests. With thousands of games being played its cost grows with the games
whose deadlines are near, not with the moves: this measures it for capacity planning. A few real
Alien City games are started by mail through the in-process processor on a manual clock, in
batches half a day apart, so that their deadlines (the server's default clock) spread over the
days ahead; then they are copied, each copy with its own id and players (every player in about
four games, as on a busy server), until ``--games`` games are in progress. Then, at the moment the
first batch's deadlines are two hours away, one scheduler run (it sends the reminders due: the
catching-up run after a start) and then the runs of the next minutes, in which nothing new is due
but everything is looked at again: their time (wall and the process's CPU; on PostgreSQL the
server's CPU too) is what a minute of the scheduler costs.

Usage::

    .venv/bin/python bench/scheduler_load.py [--games 1000,10000,100000] [--store sqlite|postgresql|both]
"""

from __future__ import annotations

import argparse
import copy
import random
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: see bench/__init__.py
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.harness.inprocess import InProcess
from bench.harness.workers import cpu_seconds, postgres_pids
from pbem.clock import ManualClock
from pbem.community.scheduler import Scheduler
from pbem.config import config_from_dict
from pbem.processing.processor import Processor
from pbem.store import open_store
from tests.server.harness import to
from tests.server.players import Player, headline

SERVER = "pbem@localhost"
BATCHES = 10  # real games are started in this many batches, twelve hours apart
PER_BATCH = 5


def real_games(store: Any, config: Any, clock: ManualClock) -> list[Any]:
    """Games started by mail, one move made in each, their deadlines half a day apart by batch."""
    from pbem.cli.mailbox import new_mail, reply_to

    processor = Processor(config, store, clock, secret=b"s" * 32)

    submit = InProcess(store, processor, clock).submit

    for b in range(BATCHES):
        tables = [(f"w{b}.{i}@example.org", f"b{b}.{i}@example.org") for i in range(PER_BATCH)]
        out = submit([new_mail(w, SERVER, f"new alien-city with {bl} as black") for w, bl in tables])
        out = submit([reply_to(to(out, bl)[0], bl, "accept") for _w, bl in tables])
        moves = [Player(rcpt, seed=n).respond(mail) for n, (rcpt, mail) in enumerate(out)
                 if "Your move" in headline(mail)]
        submit(moves)
        clock.advance(hours=12)
    return [row for row in store.list_games() if row.status == "active"]


def copies(base: list[Any], count: int, rng: random.Random) -> list[Any]:
    """``count`` copies of the real games, each with its own id and players: player k of 2 x count
    seats plays in about four games."""
    players = max(count // 2, 2)
    out = []
    for n in range(count):
        original = base[n % len(base)]
        row = copy.deepcopy(original)
        row.id = f"cp-{n + 1}"
        row.record["id"] = row.id
        row.thread_id = f"<cp-{n + 1}@bench>"
        drawn = rng.sample(range(players), len(row.seats))
        for seat, k in zip(row.seats, drawn, strict=True):
            seat.email = f"p{k}@copy.example"
            seat.token_hash = f"copy-{n}-{seat.seat}"  # unique; nobody moves in a copy by mail
            info = row.record.get("players", {}).get(seat.seat)
            if isinstance(info, dict):
                info["email"] = seat.email
        out.append(row)
    return out


def run(database: str, count: int, work: Path, postgres: Any = None) -> dict[str, Any]:
    config = config_from_dict({"server": {"data_dir": str(work / "data"), "address": SERVER}})
    store = open_store(database)
    clock = ManualClock(datetime(2026, 11, 20, 10, 0, tzinfo=UTC))
    base = real_games(store, config, clock)
    rng = random.Random(7)
    started = time.perf_counter()
    rows = copies(base, max(count - len(base), 0), rng)
    for first in range(0, len(rows), 2000):
        with store.transaction() as tx:
            for row in rows[first:first + 2000]:
                tx.insert_game(row)
    filled = time.perf_counter() - started
    first_deadline = min(r.deadline_at for r in base if r.deadline_at is not None)
    clock.set(first_deadline - timedelta(hours=2))
    scheduler = Scheduler(config, store, clock, secret=b"s" * 32)

    def database_cpu() -> float:
        return sum(cpu_seconds(p) for p in postgres_pids(postgres)) if postgres is not None else 0.0

    def timed() -> dict[str, Any]:
        pg_before = database_cpu()
        cpu, wall = time.process_time(), time.perf_counter()
        report = scheduler.run_once()
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        pg_used = database_cpu() - pg_before
        return {"wall_s": round(wall, 3), "cpu_s": round(cpu, 3),
                "postgresql_cpu_s": round(pg_used, 3) if postgres is not None else None,
                "report": str(report)}

    first = timed()
    later = []
    for _ in range(3):
        clock.advance(minutes=1)
        later.append(timed())
    store.close()
    return {"games": count, "real": len(base), "filled_s": round(filled, 1), "first_run": first,
            "next_runs": later}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", default="1000,10000,100000")
    parser.add_argument("--store", choices=("sqlite", "postgresql", "both"), default="both")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.games.split(",") if s]
    with tempfile.TemporaryDirectory(prefix="pbem-sched-") as tmp:
        work = Path(tmp)
        for size in sizes:
            if args.store in ("sqlite", "both"):
                print("sqlite    ", run(str(work / f"s{size}.sqlite3"), size, work), flush=True)
            if args.store in ("postgresql", "both"):
                from tests.services.postgres import Postgres
                with Postgres(durable=True) as postgres:
                    dsn = postgres.create_database(f"s{size}")
                    print("postgresql", run(dsn, size, work, postgres), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
