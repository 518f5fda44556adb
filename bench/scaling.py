#!/usr/bin/env python3
"""Scaling benchmark: SQLite and PostgreSQL, one to four ``pbem serve`` workers, 10 to 100 000 stored
games, measured side by side in one run on the harness of ``bench/harness/``.

1. **Throughput.** For each setup, N games are started by mail (untimed); then the first move of every
   game is sent over a few SMTP connections (spread over the workers' listeners) and the clock runs
   until every move's reply (the opponent's "Your move") reached the relay, an SMTP sink. The setups:
   the bare transport (an SMTP listener that only relays each mail to the sink: the ceiling the load
   generator and the machine allow), one worker on SQLite, and one, two and four workers on a real
   PostgreSQL 15 on loopback (fsync and synchronous commit on, as shipped). Printed per setup: moves
   per second, the share of the bare transport's rate, and the CPU seconds of every process (each
   worker's server and processor processes, the PostgreSQL server, the benchmark itself with its sink).
2. **Growth.** One worker on each store, with 10, 1 000, 10 000 and 100 000 games stored (finished
   games like an archive's, plus the games being played); at each size moves arrive at a steady rate
   and the p50/p99 of the time from sending a move to its reply at the relay, and of the processor's
   own time per move (its log line), are printed.

Usage::

    .venv/bin/python bench/scaling.py [--games N] [--workers 1,2,4] [--sizes 10,1000,10000,100000]
    .venv/bin/python bench/scaling.py --only throughput --py-spy /tmp/spy   # py-spy of the processors
    .venv/bin/python bench/scaling.py --json

Everything listens on 127.0.0.1; every server and temporary directory is removed at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import math
import os
import platform
import re
import signal
import sqlite3
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: see bench/__init__.py
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.harness.bare import BareTransport
from bench.harness.daemon import PySpy
from bench.harness.players import answer, make_tables, raw_bytes, setup_games, smtp_submit, smtp_submit_raw
from bench.harness.report import commit, cpu_model, loadavg, percentile, say, workdir
from bench.harness.sink import all_replied, start_sink
from bench.harness.stages import normalise_id
from bench.harness.workers import CpuMeter, Worker, postgres_pids, worker_config

GOALS = {"sqlite_moves_per_second": 200.0, "sqlite_share_of_bare": 0.40,
         "postgresql_moves_per_second": 120.0, "two_workers_speedup": 1.5}
_MS = re.compile(r"msgid=(\S+) .* ms=([0-9.]+)$")


# --- one throughput setup --------------------------------------------------------------------------


def _games(sink: Any, ports: list[int], count: int, tag: str, connections: int) -> dict[str, Any]:
    """Start ``count`` games by mail; by game id, the "Your move" mail its first mover got."""
    tables = make_tables(count, tag)
    return setup_games(tables, lambda ms: smtp_submit(ports, ms, connections), sink,
                       timeout=max(120.0, count * 0.5))


def _moves(your_move: dict[str, Any], players: dict[str, Any]
           ) -> tuple[list[tuple[str, list[str], bytes]], dict[tuple[str, int], str]]:
    """The answer to each "Your move" mail, ready to send, and by (game, ply) the Message-ID of the
    move whose reply that is."""
    prepared, keys = [], {}
    for game, arrival in sorted(your_move.items()):
        reply = answer(arrival, players)
        if reply is None:  # the game is over
            continue
        keys[(game, (arrival.ply or 0) + 1)] = normalise_id(reply["Message-ID"])
        prepared.append((reply["From"].addresses[0].addr_spec, [reply["To"].addresses[0].addr_spec],
                         raw_bytes(reply)))
    return prepared, keys


def processing_ms(workers: list[Worker], message_ids: set[str]) -> list[float]:
    """The processor's own time for each of these messages, from its log line (``ms=``)."""
    found = []
    for worker in workers:
        for line in worker.log.read_text(errors="replace").splitlines():
            match = _MS.search(line)
            if match and match.group(1) in message_ids:
                found.append(float(match.group(2)))
    return found


def throughput(label: str, database: str, count: int, args: argparse.Namespace, work: Path,
               cleanup: list[Callable[[], None]], postgres: Any) -> dict[str, Any]:
    from tests.services.requirements import free_port

    sink = start_sink()
    cleanup.append(sink.stop)
    ports = [free_port() for _ in range(count)]
    workers = []
    for i, port in enumerate(ports):
        config = worker_config(work / f"{label}-{i}.toml", database=database, port=port,
                               relay=(sink.host, sink.port), data_dir=work / f"{label}-{i}",
                               log_level=args.log_level)
        workers.append(Worker(f"{label}-{i}", config))
        cleanup.append(workers[-1].stop)
    for worker, port in zip(workers, ports, strict=True):
        worker.wait_listening(port)
    say(f"[{label}] {count} worker(s) up; setting up {args.games} games by mail ...")
    prepared, keys = _moves(_games(sink, ports, args.games, label, args.connections), {})
    time.sleep(2.5)  # every worker has written its first heartbeat and taken its roles
    groups: dict[str, Any] = {}
    for w in workers:
        groups[f"{w.name} serve"] = (lambda w=w: [w.process.pid])
        groups[f"{w.name} processor"] = (lambda w=w: [p for p in [w.processor_pid()] if p])
    if postgres is not None and database.startswith("postgresql"):
        groups["postgresql server"] = lambda: postgres_pids(postgres)
    groups["benchmark (load and sink)"] = lambda: [os.getpid()]
    meter = CpuMeter(groups)
    spies = []
    if args.py_spy:
        for w in workers[:1]:
            for part, pid in (("processor", w.processor_pid()), ("serve", w.process.pid)):
                if pid:
                    spies.append(PySpy(pid, Path(args.py_spy) / f"{label}-{part}.txt"))
                    cleanup.append(spies[-1].stop)
    base = sink.count()
    say(f"[{label}] {len(prepared)} moves over {args.connections} connections ...")
    meter.start()
    t0 = time.monotonic()
    submitted = smtp_submit_raw(ports, prepared, args.connections)
    arrivals = sink.wait_until(all_replied(base, set(keys)), max(120.0, len(prepared) * 0.5), "all replies")
    replied = sorted(a.at - t0 for a in arrivals[base:] if (a.game, a.ply) in keys)
    elapsed = replied[-1]
    cpu = meter.stop()
    for spy in spies:
        spy.stop()
    per_move = processing_ms(workers, set(keys.values()))
    problems = [p for w in workers for p in w.problems()]
    for w in workers:
        w.stop()
    sink.stop()
    return {"setup": label, "workers": count, "moves": len(prepared),
            "seconds": round(elapsed, 3), "moves_per_second": round(len(prepared) / elapsed, 1),
            "cpu_seconds": cpu, "cpu_ms_per_move": round(sum(cpu.values()) * 1000 / len(prepared), 1),
            "processing_ms": {"p50": percentile(per_move, 50), "p99": percentile(per_move, 99)},
            # Where the run's time went: the last move accepted, the first and the middle reply.
            "timeline_s": {"submitted": round(max(end for _, end in submitted) - t0, 3),
                           "first_reply": round(replied[0], 3),
                           "half_replied": round(replied[len(replied) // 2], 3)},
            "log_problems": problems[:5], "prepared": prepared}


def bare(prepared: list[tuple[str, list[str], bytes]], args: argparse.Namespace,
         cleanup: list[Callable[[], None]]) -> dict[str, Any]:
    from tests.services.requirements import free_port, wait_for_port

    sink = start_sink()
    cleanup.append(sink.stop)
    port = free_port()
    transport = BareTransport(port, (sink.host, sink.port))
    cleanup.append(transport.stop)
    assert wait_for_port("127.0.0.1", port, 30)
    meter = CpuMeter({"bare transport": lambda: [transport.process.pid],
                      "benchmark (load and sink)": lambda: [os.getpid()]})
    say(f"[bare] {len(prepared)} mails through a listener that only relays them ...")
    meter.start()
    t0 = time.monotonic()
    smtp_submit_raw(port, prepared, args.connections)
    arrivals = sink.wait_until(lambda a: len(a) >= len(prepared), 120.0, "all mails relayed")
    elapsed = arrivals[len(prepared) - 1].at - t0
    cpu = meter.stop()
    transport.stop()
    sink.stop()
    return {"setup": "bare transport (no pbem)", "workers": 0, "moves": len(prepared),
            "seconds": round(elapsed, 3), "moves_per_second": round(len(prepared) / elapsed, 1),
            "cpu_seconds": cpu, "cpu_ms_per_move": round(sum(cpu.values()) * 1000 / len(prepared), 1),
            "processing_ms": {"p50": math.nan, "p99": math.nan}, "log_problems": []}


# --- growth --------------------------------------------------------------------------------------


def fill(store: Any, start: int, stop: int, base: list[Any]) -> float:
    """Finished games ``ac-start+1 .. ac-stop`` (copies of ``base`` with their own ids and players),
    then the game counter past them, as an archive import leaves a store."""
    from bench.harness.pbem_api import GameRow, Seat

    started = time.perf_counter()
    batch = 2000
    for first in range(start, stop, batch):
        with store.transaction() as tx:
            for number in range(first + 1, min(first + batch, stop) + 1):
                original = base[number % len(base)]
                game_id = f"fill-{number}"
                seats = [Seat(seat=s.seat, email=f"p{(number * 7 + k) % 5000}@fill.example",
                              name=s.name, accepted=True) for k, s in enumerate(original.seats)]
                tx.insert_game(GameRow(id=game_id, game=original.game, status="over",
                                       record={**original.record, "id": game_id}, seats=seats,
                                       created_at=original.created_at, updated_at=original.updated_at,
                                       finished_at=original.finished_at))
    return time.perf_counter() - started


def steady(port: int, prepared: list[tuple[str, list[str], bytes]], rate: float) -> list[float]:
    """Send at ``rate`` per second on one connection; per mail, when its sending began."""
    import smtplib

    sent: list[float] = []
    with smtplib.SMTP("127.0.0.1", port, timeout=60) as smtp:
        start = time.monotonic()
        for i, (sender, rcpts, data) in enumerate(prepared):
            delay = start + i / rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            sent.append(time.monotonic())
            smtp.sendmail(sender, rcpts, data)
    return sent


def growth(kind: str, database: str, args: argparse.Namespace, work: Path,
           cleanup: list[Callable[[], None]]) -> list[dict[str, Any]]:
    from bench.harness.pbem_api import open_store, random_rows
    from tests.services.requirements import free_port

    sizes = [int(s) for s in args.sizes.split(",")]
    base = random_rows(40, seed=5)
    rows = []
    filled = 0
    for size in sizes:
        target = max(size - min(args.growth_games, size), 0)
        store = open_store(database)
        seconds = fill(store, filled, target, base) if target > filled else 0.0
        store.close()
        say(f"[growth {kind}] {target} finished games stored ({seconds:.0f} s to add {target - filled})")
        filled = max(filled, target)
        sink = start_sink()
        cleanup.append(sink.stop)
        port = free_port()
        label = f"grow-{kind}-{size}"
        config = worker_config(work / f"{label}.toml", database=database, port=port,
                               relay=(sink.host, sink.port), data_dir=work / label, log_level=args.log_level)
        worker = Worker(label, config)
        cleanup.append(worker.stop)
        worker.wait_listening(port)
        # At least --growth-moves moves, over at most --growth-games games (fewer than the size),
        # each game answering its "Your move" round after round.
        games = min(args.growth_games, size)
        your_move = _games(sink, [port], games, f"g{size}{kind[0]}", args.connections)
        players: dict[str, Any] = {}
        latency: list[float] = []
        timed: set[str] = set()
        while len(latency) < args.growth_moves and your_move:
            prepared, keys = _moves(your_move, players)
            base_count = sink.count()
            sent = steady(port, prepared, args.rate)
            arrivals = sink.wait_until(all_replied(base_count, set(keys)), 120.0, "all replies")
            reply = {}
            for a in arrivals[base_count:]:
                if (a.game, a.ply) in keys and (a.game, a.ply) not in reply:
                    reply[(a.game, a.ply)] = a
            sent_at = dict(zip(keys.values(), sent, strict=True))
            latency += [reply[key].at - sent_at[mid] for key, mid in keys.items()]
            timed |= set(keys.values())
            your_move = {key[0]: a for key, a in reply.items() if a.headline.startswith("Your move")}
        per_move = processing_ms([worker], timed)
        worker.stop()
        sink.stop()
        rows.append({"store": kind, "games_stored": filled + games,
                     "moves": len(latency), "rate": args.rate,
                     "latency_s": {"p50": round(percentile(latency, 50), 4),
                                   "p99": round(percentile(latency, 99), 4)},
                     "processing_ms": {"p50": percentile(per_move, 50), "p99": percentile(per_move, 99)},
                     "fill_seconds": round(seconds, 1), "log_problems": worker.problems()[:5]})
    return rows


# --- the run ---------------------------------------------------------------------------------------


def machine(postgres: Any) -> dict[str, Any]:
    from tests.services.postgres import version

    return {"date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"), "nproc": os.cpu_count(),
            "cpu": cpu_model("?"), "python": platform.python_version(), "sqlite": sqlite3.sqlite_version,
            "postgresql": version(), "kernel": platform.release(), "loadavg_before": loadavg(),
            "commit": commit()}


def run(args: argparse.Namespace) -> dict[str, Any]:
    from tests.services.postgres import Postgres

    signal.signal(signal.SIGTERM, lambda signum, frame: (_ for _ in ()).throw(KeyboardInterrupt()))
    with workdir("pbem-bench-scaling-", args.keep) as work:
        cleanup: list[Callable[[], None]] = []
        try:
            postgres = Postgres(durable=True)
            cleanup.append(postgres.close)
            results: dict[str, Any] = {"machine": machine(postgres)}
            if args.only in (None, "throughput"):
                sqlite = f"sqlite:///{work / 'tp.sqlite3'}"
                rows = [throughput("sqlite", sqlite, 1, args, work, cleanup, None)]
                # The bare rate moves with the machine's other work more than anything else here,
                # and every share is taken of it: the median of three runs.
                runs = sorted((bare(rows[0]["prepared"], args, cleanup) for _ in range(3)),
                              key=lambda r: r["moves_per_second"])
                runs[1]["runs"] = [r["moves_per_second"] for r in runs]
                rows.insert(0, runs[1])
                for count in [int(n) for n in args.workers.split(",") if n]:
                    dsn = postgres.create_database(f"tp{count}")
                    rows.append(throughput(f"pg{count}", dsn, count, args, work, cleanup, postgres))
                for row in rows:
                    row.pop("prepared", None)
                results["throughput"] = rows
            if args.only in (None, "growth"):
                results["growth"] = (
                    growth("sqlite", f"sqlite:///{work / 'grow.sqlite3'}", args, work, cleanup)
                    + growth("postgresql", postgres.create_database("grow"), args, work, cleanup))
        finally:
            for undo in reversed(cleanup):
                with contextlib.suppress(Exception):
                    undo()
    results["machine"]["loadavg_after"] = loadavg()
    return results


def judged(results: dict[str, Any]) -> dict[str, tuple[float, float, bool]]:
    """Each goal: (measured, goal, met)."""
    rows = {r["setup"]: r for r in results.get("throughput", [])}
    out: dict[str, tuple[float, float, bool]] = {}
    bare_rate = rows.get("bare transport (no pbem)", {}).get("moves_per_second")
    sqlite = rows.get("sqlite", {}).get("moves_per_second")
    if sqlite:
        out["SQLite, one worker: moves/s"] = (sqlite, GOALS["sqlite_moves_per_second"],
                                             sqlite >= GOALS["sqlite_moves_per_second"])
        if bare_rate:
            share = sqlite / bare_rate
            out["SQLite, one worker: share of the bare transport"] = (
                round(share, 3), GOALS["sqlite_share_of_bare"], share >= GOALS["sqlite_share_of_bare"])
    one, two = rows.get("pg1", {}).get("moves_per_second"), rows.get("pg2", {}).get("moves_per_second")
    if one:
        out["PostgreSQL, one worker: moves/s"] = (one, GOALS["postgresql_moves_per_second"],
                                                 one >= GOALS["postgresql_moves_per_second"])
    if one and two:
        out["PostgreSQL, two workers / one"] = (round(two / one, 2), GOALS["two_workers_speedup"],
                                               two / one >= GOALS["two_workers_speedup"])
    return out


def _ceiling(rows: list[dict[str, Any]], cores: int) -> list[str]:
    """What the cores allow at the CPU the two workers spent per move (load and sink included,
    since they share the cores): the most any number of workers could reach here."""
    by = {r["setup"]: r for r in rows}
    one, two = by.get("pg1"), by.get("pg2")
    if not one or not two or not two["cpu_ms_per_move"]:
        return []
    most = cores * 1000 / two["cpu_ms_per_move"]
    ratio = most / one["moves_per_second"]
    return [f"CPU ceiling: {cores} cores at {two['cpu_ms_per_move']} ms of CPU a move (two workers, "
            f"every process counted) allow at most {most:.0f} moves/s, {ratio:.2f} x "
            f"one worker's {one['moves_per_second']}.", ""]


def markdown(results: dict[str, Any]) -> str:
    m = results["machine"]
    out = [f"## pbem scaling benchmark, {m['date']}", "",
           f"Machine: {m['nproc']} CPUs ({m['cpu']}), Python {m['python']}, SQLite {m['sqlite']}, "
           f"PostgreSQL {m['postgresql']} (loopback, fsync on), Linux {m['kernel']}; checkout {m['commit']}; "
           f"load average before {m['loadavg_before']}, after {m.get('loadavg_after', '?')}", ""]
    rows = results.get("throughput", [])
    if rows:
        bare_rate = next((r["moves_per_second"] for r in rows if r["workers"] == 0), None)
        out += ["| setup | moves | moves/s | of bare | processor ms p50 / p99 | CPU ms per move | "
                "cores busy | CPU seconds by process |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for r in rows:
            share = f"{r['moves_per_second'] / bare_rate:.0%}" if bare_rate else "-"
            rate = f"**{r['moves_per_second']}**" + (
                f" (median of {', '.join(map(str, r['runs']))})" if "runs" in r else "")
            name = {"sqlite": "SQLite, 1 worker", "pg1": "PostgreSQL, 1 worker"}.get(
                r["setup"], f"PostgreSQL, {r['workers']} workers" if r["workers"] else r["setup"])
            proc = r["processing_ms"]
            ms = "-" if math.isnan(proc["p50"]) else f"{proc['p50']:.1f} / {proc['p99']:.1f}"
            cpu = ", ".join(f"{k} {v:.1f}" for k, v in r["cpu_seconds"].items())
            busy = sum(r["cpu_seconds"].values()) / r["seconds"]
            out.append(f"| {name} | {r['moves']} | {rate} | {share} | {ms} | "
                       f"{r['cpu_ms_per_move']} | {busy:.2f} of {m['nproc']} | {cpu} |")
        out.append("")
        out += _ceiling(rows, m["nproc"])
    growth_rows = results.get("growth", [])
    if growth_rows:
        out += ["| store | games stored | moves at | reply latency p50 / p99 (s) | processor ms p50 / p99 |",
                "| --- | --- | --- | --- | --- |"]
        for r in growth_rows:
            proc = r["processing_ms"]
            out.append(f"| {r['store']} | {r['games_stored']:,} | {r['rate']:g}/s | "
                       f"{r['latency_s']['p50']:.3f} / {r['latency_s']['p99']:.3f} | "
                       f"{proc['p50']:.1f} / {proc['p99']:.1f} |")
        out.append("")
    goals = judged(results)
    if goals:
        out += ["| goal | measured | target | met |", "| --- | --- | --- | --- |"]
        out += [f"| {k} | {v[0]} | {v[1]} | {'yes' if v[2] else 'NO'} |" for k, v in goals.items()]
    problems = [p for r in rows + growth_rows for p in r.get("log_problems", [])]
    if problems:
        out += ["", "Worker log errors: " + "; ".join(problems[:5])]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=600, help="games (and moves) per throughput setup")
    parser.add_argument("--connections", type=int, default=4, help="parallel SMTP connections (4)")
    parser.add_argument("--workers", default="1,2,4", help="PostgreSQL worker counts (1,2,4)")
    parser.add_argument("--sizes", default="10,1000,10000,100000", help="stored games for the growth part")
    parser.add_argument("--growth-games", type=int, default=50,
                        help="games played at each size (50, or fewer than the size)")
    parser.add_argument("--growth-moves", type=int, default=200, help="moves timed at each size (200)")
    parser.add_argument("--rate", type=float, default=20.0, help="growth part: moves per second (20)")
    parser.add_argument("--only", choices=("throughput", "growth"))
    parser.add_argument("--log-level", default="INFO", choices=("DEBUG", "INFO", "WARNING"),
                        help="the workers' log level (INFO: the processor's ms per move is read from it)")
    parser.add_argument("--py-spy", metavar="DIR",
                        help="sample the first worker's processor and serve processes with py-spy")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--check", action="store_true", help="exit 1 when a goal is missed")
    args = parser.parse_args(argv)
    try:
        results = run(args)
    except KeyboardInterrupt:
        say("interrupted: servers stopped, temporary files removed")
        return 130
    print(json.dumps(results, indent=2, default=str) if args.json else markdown(results))
    return 0 if not args.check or all(v[2] for v in judged(results).values()) else 1


if __name__ == "__main__":
    sys.exit(main())
