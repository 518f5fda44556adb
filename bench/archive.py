#!/usr/bin/env python3
"""Archive benchmark: export and import rates, and search latency over a large store.

1. **Games.** ``--base`` (1000) finished games are played by the engines (random legal moves, 20 %
   Space Truckin' with 2-5 players, some resignations: ``pbem.archive.sample``), then replicated to
   ``--games`` (10 000) with new ids, new player addresses and shifted dates. Replicas replay exactly
   like their originals, so the import still checks the schema and replays every move of every game.
2. **Export** of all of them from a SQLite store to record files plus index (goal >= 200 games/s).
3. **Import** of that directory into an empty store: schema check and full replay per file, one
   transaction per game, checking in ``--jobs`` worker processes (goal >= 200 games/s).
4. **Search** over ``--search-games`` (100 000) rows inserted directly in bulk transactions (the
   same records replicated again; replaying 100 000 games would take the whole time budget). Each
   filter combination runs ``--repeat`` times for the first page (50 games, newest first) the way
   ``pbem archive search`` asks; reported: median and worst milliseconds (goal <= 100 ms).

Usage::

    .venv/bin/python bench/archive.py [--games N] [--base N] [--search-games N] [--jobs N] [--json]

Everything is written into a temporary directory that is removed at the end (``--keep`` keeps it).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import random
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: see bench/__init__.py
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.harness.pbem_api import (
    GameRow,
    Seat,
    Store,
    default_jobs,
    export_games,
    import_archive,
    make_filters,
    open_store,
    random_rows,
    search,
)
from bench.harness.report import cpu_model, workdir

GOAL_RATE = 200.0
GOAL_SEARCH_MS = 100.0


def _shift(text: Any, delta: timedelta) -> Any:
    if not isinstance(text, str):
        return text
    when = dt.datetime.fromisoformat(text) + delta
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _plus(value: dt.datetime | None, delta: timedelta) -> dt.datetime | None:
    return value + delta if value else None


def replicate(base: list[GameRow], count: int, n_people: int, seed: int, deep: bool = True) -> list[GameRow]:
    """``count`` rows from ``base``: same moves, new ids, players drawn from ``n_people`` addresses
    and dates shifted by up to two years, so searches by player and date select realistic shares.

    ``deep=False`` (the search store) changes only the indexed columns and the record's id, sharing
    the rest of the record: searches read the columns, and 100 000 deep copies would take minutes."""
    rng = random.Random(seed)
    people = [f"p{i}@bench.example" for i in range(n_people)]
    numbers = {"ac": 0, "st": 0}
    rows = []
    for i in range(count):
        original = base[i % len(base)]
        prefix = "st" if original.game == "space-truckin" else "ac"
        numbers[prefix] += 1
        game_id = f"{prefix}-{numbers[prefix]}"
        delta = timedelta(days=rng.randrange(0, 730), minutes=rng.randrange(0, 1440))
        chosen = rng.sample(people, len(original.seats))
        if deep:
            record = json.loads(json.dumps(original.record))
            for info, email in zip(record["players"].values(), chosen, strict=True):
                info["email"] = email
                info["name"] = email.split("@")[0]
            for key in ("created_at", "started_at"):
                record[key] = _shift(record.get(key), delta)
            for entry in record["moves"]:
                if "at" in entry:
                    entry["at"] = _shift(entry["at"], delta)
            if "result" in record:
                record["result"]["at"] = _shift(record["result"].get("at"), delta)
        else:
            record = {**original.record, "id": game_id}
        record["id"] = game_id
        seats = [Seat(seat=s.seat, email=email, name=email.split("@")[0], accepted=True)
                 for s, email in zip(original.seats, chosen, strict=True)]
        rows.append(GameRow(id=game_id, game=original.game, status=original.status, record=record,
                            seats=seats, created_at=_plus(original.created_at, delta),
                            updated_at=_plus(original.updated_at, delta),
                            finished_at=_plus(original.finished_at, delta)))
    return rows


def bulk_insert(store: Store, rows: list[GameRow], batch: int = 5000) -> None:
    for i in range(0, len(rows), batch):
        with store.transaction() as tx:
            for row in rows[i:i + batch]:
                tx.insert_game(row)


def run_searches(store: Store, combos: list[tuple[str, dict[str, str]]], repeat: int) -> list[dict[str, Any]]:
    out = []
    for label, spec in combos:
        filters = make_filters(**spec)
        times = []
        found = 0
        for _ in range(repeat):
            seconds, page = timed(lambda f=filters: search(store, f, limit=50))
            times.append(seconds * 1000)
            found = len(page)
        out.append({"filters": label, "found": found, "median_ms": statistics.median(times),
                    "max_ms": max(times)})
    return out


def timed(func: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    value = func()
    return time.perf_counter() - started, value


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children (the import's worker processes)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def machine() -> str:
    """Cores available to this process, not in the machine: the import starts one worker per such core
    unless --jobs says otherwise."""
    cpu = cpu_model(platform.processor() or platform.machine())
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    return (f"{platform.node()}: {cpu}, {cores} CPU(s), Python {platform.python_version()}, "
            f"SQLite {sqlite3.sqlite_version}")


def run(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    results: dict[str, Any] = {"machine": machine(),
                               "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                               "jobs": args.jobs, "load_before": os.getloadavg()[0]}
    print(f"generating {args.base} games by random play ...", file=sys.stderr)
    seconds, base = timed(lambda: random_rows(args.base, seed=args.seed))
    results["generate"] = {"games": args.base, "seconds": seconds, "rate": args.base / seconds}
    games = replicate(base, args.games, n_people=max(50, args.games // 25), seed=args.seed)

    source = open_store(work / "source.sqlite3")
    bulk_insert(source, games)
    print(f"exporting {len(games)} games ...", file=sys.stderr)
    cpu = cpu_seconds()
    seconds, report = timed(lambda: export_games(source, work / "archive", make_filters()))
    cpu = cpu_seconds() - cpu
    source.close()
    assert report.written == len(games)
    results["export"] = {"games": report.written, "seconds": seconds, "rate": report.written / seconds,
                         "cpu_ms_per_game": cpu * 1000 / report.written}

    print(f"importing {len(games)} games into an empty store ...", file=sys.stderr)
    target = open_store(work / "target.sqlite3")
    cpu = cpu_seconds()
    seconds, imported = timed(lambda: import_archive(target, work / "archive", jobs=args.jobs))
    cpu = cpu_seconds() - cpu
    target.close()
    if imported.bad:
        raise SystemExit(f"import found bad files: {imported.bad[:3]}")
    results["import"] = {"games": len(imported.imported), "seconds": seconds,
                         "rate": len(imported.imported) / seconds,
                         "cpu_ms_per_game": cpu * 1000 / len(imported.imported)}
    del games

    print(f"filling a store with {args.search_games} games for the searches ...", file=sys.stderr)
    big = open_store(work / "search.sqlite3")
    people = max(100, args.search_games // 50)
    many = replicate(base, args.search_games, n_people=people, seed=args.seed + 1, deep=False)
    started = time.perf_counter()
    bulk_insert(big, many)
    results["search_fill"] = {"games": len(many), "seconds": time.perf_counter() - started,
                              "db_mb": (work / "search.sqlite3").stat().st_size / 1e6}
    someone = many[len(many) // 2].seats[0].email
    del many
    combos: list[tuple[str, dict[str, str]]] = [
        ("player", {"player": someone}),
        ("game", {"game": "space-truckin"}),
        ("date range (1 month)", {"date_from": "2026-06-01", "date_to": "2026-06-30"}),
        ("player + game", {"player": someone, "game": "alien-city"}),
        ("player + date range", {"player": someone, "date_from": "2026-01-01", "date_to": "2026-12-31"}),
        ("game + date range", {"game": "alien-city", "date_from": "2027-03-01", "date_to": "2027-03-31"}),
        ("game + status over", {"game": "alien-city", "status": "over"}),
        ("all filters", {"player": someone, "game": "alien-city", "date_from": "2026-01-01",
                         "date_to": "2027-12-31", "status": "over"}),
        ("no filter", {}),
        ("result draw", {"result": "draw"}),
        ("result resigned + game", {"result": "resigned", "game": "alien-city"}),
        ("winner", {"winner": someone}),
        ("loser + date range", {"loser": someone, "date_from": "2026-01-01", "date_to": "2026-12-31"}),
    ]
    results["searches"] = run_searches(big, combos, args.repeat)
    big.close()
    results["load_after"] = os.getloadavg()[0]
    return results


def report(results: dict[str, Any], args: argparse.Namespace) -> str:
    ok = lambda good: "ok" if good else "MISSED"  # noqa: E731
    lines = [f"pbem archive benchmark, {results['date']}",
             f"machine: {results['machine']}",
             f"load average before/after: {results['load_before']:.2f} / {results['load_after']:.2f}",
             f"games: {args.base} played by the engines in {results['generate']['seconds']:.1f} s "
             f"({results['generate']['rate']:.0f} games/s), replicated to {args.games}",
             "",
             f"{'measure':<34} {'games':>7} {'seconds':>8} {'rate/s':>8} {'CPU ms/game':>12}  goal",
             f"{'export (records + index)':<34} {results['export']['games']:>7} "
             f"{results['export']['seconds']:>8.2f} {results['export']['rate']:>8.0f} "
             f"{results['export']['cpu_ms_per_game']:>12.2f}  "
             f">= {GOAL_RATE:.0f}/s {ok(results['export']['rate'] >= GOAL_RATE)}",
             f"{'import (schema + replay, ' + str(results['jobs']) + ' jobs)':<34} "
             f"{results['import']['games']:>7} {results['import']['seconds']:>8.2f} "
             f"{results['import']['rate']:>8.0f} {results['import']['cpu_ms_per_game']:>12.2f}  "
             f">= {GOAL_RATE:.0f}/s {ok(results['import']['rate'] >= GOAL_RATE)}",
             "(CPU ms/game counts this process and the import's workers; with the load average above "
             "shared with other work, cores / CPU time is what an idle machine would reach)",
             "",
             f"search over {results['search_fill']['games']} games "
             f"({results['search_fill']['db_mb']:.0f} MB, "
             f"filled in {results['search_fill']['seconds']:.0f} s), "
             f"first page of 50, {args.repeat} runs each:",
             f"{'filters':<34} {'found':>7} {'median ms':>10} {'max ms':>8}  goal"]
    for s in results["searches"]:
        lines.append(f"{s['filters']:<34} {s['found']:>7} {s['median_ms']:>10.1f} {s['max_ms']:>8.1f}  "
                     f"<= {GOAL_SEARCH_MS:.0f} ms {ok(s['max_ms'] <= GOAL_SEARCH_MS)}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=10_000)
    parser.add_argument("--base", type=int, default=1000, help="games played by the engines")
    parser.add_argument("--search-games", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=default_jobs())
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args(argv)
    with workdir("pbem-bench-archive-", args.keep) as work:
        results = run(args, work)
    print(json.dumps(results, indent=1) if args.json else report(results, args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
