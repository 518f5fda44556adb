#!/usr/bin/env python3
"""Processor CPU per move, in one process: the figure that decides one worker's ceiling.

``bench/scaling.py`` measures the whole server over SMTP on a machine that other work shares; its
moves per second follow the load. The CPU the processor spends per move does not, and this script
measures only that: N Alien City games are set up in process (untimed), the first move of every
game is stored as a player's reply would be, and then the real ``Processor`` applies them: the
first tenth while the SQL statements it sends are counted, the rest (``moves``) while the thread's
CPU time is (``your_move_mails``: the opponents' "Your move" mails, one per applied move, all).
``--profile N`` prints cProfile's top N; the timed part is the function ``timed_moves``, to cut a
py-spy profile to it.

``--instructions`` counts instead of timing: the user-space instructions the processor executes
per move, under valgrind's cachegrind (``valgrind`` on the PATH), from two runs of this script that
differ only in the timed part (one stops before it), with a fixed hash seed, and every fair round
of ten messages applied in one transaction (the processor's 5 ms budget per transaction would
depend on valgrind's slowness: one message each; the running server averages 2.6). The count does not
move with the host's other work, which moves the CPU time of a move here by a quarter within an
hour (it repeats to about 0.05 %; one run of 100 games takes a minute or two), so it is the figure
for comparing two versions of the code: a cut of a few per cent shows in it, not in the times
(another checkout is counted by this script copied into it and run there, with the venv of this
one: it imports the pbem beside it). The kernel's work (system calls, page faults) is not in it.

Usage::

    .venv/bin/python bench/processor_cpu.py [--games 300] [--store sqlite|postgresql|both] [--profile N]
    .venv/bin/python bench/processor_cpu.py --instructions [--games 100] [--store sqlite]
    PBEM_TRACE_SQL=1 .venv/bin/python bench/processor_cpu.py --games 3 --store sqlite
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import pstats
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: see bench/__init__.py
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.harness.inprocess import InProcess
from pbem.clock import ManualClock
from pbem.config import config_from_dict
from pbem.processing import processor as processor_module
from pbem.processing.context import StateCache
from pbem.processing.processor import Processor
from pbem.store import open_store
from tests.server.harness import to
from tests.server.players import Player, headline

SERVER = "pbem@localhost"
TRACE = bool(os.environ.get("PBEM_TRACE_SQL"))  # SQLite: print the first statements sent


def _counting(store: Any) -> tuple[Callable[[], int], Callable[[], None]]:
    """Count the statements the store sends from now on (its connection's execute calls); the
    second function stops counting. Not while the CPU is timed: sqlite3 hands a trace callback
    each statement with its parameters written out, a mail of 10 KB as 20 KB of hex, which alone
    made a move look 0.25 ms dearer."""
    count = [0]
    conn = store._conn()  # the processor runs on this thread, so this is its connection
    if hasattr(conn, "set_trace_callback"):  # sqlite3
        def trace(statement: str) -> None:
            count[0] += 1
            if TRACE and count[0] < 60:
                print("SQL", " ".join(statement.split())[:150])
        conn.set_trace_callback(trace)
        return (lambda: count[0]), (lambda: conn.set_trace_callback(None))
    else:  # psycopg: Connection.execute goes through a cursor of the connection's cursor class
        cursor_class = conn.cursor_factory

        class Counting(cursor_class):  # type: ignore[misc, valid-type]
            def execute(self, *args: Any, **kwargs: Any) -> Any:
                count[0] += 1
                return super().execute(*args, **kwargs)

            def executemany(self, *args: Any, **kwargs: Any) -> Any:
                count[0] += 1
                return super().executemany(*args, **kwargs)
        conn.cursor_factory = Counting

    def stop() -> None:
        conn.cursor_factory = cursor_class
    return (lambda: count[0]), stop


def timed_moves(processor: Processor, limit: int | None = None) -> int:
    """The measured part (its own function, so a py-spy profile can be cut to it)."""
    done = 0
    while (limit is None or done < limit) and (
            n := processor.process_pending(1000 if limit is None else limit - done)):
        done += n
    return done


def run(database: str, games: int, work: Path, profile: int, cold: bool = False,
        setup_only: bool = False) -> dict[str, float]:
    config = config_from_dict({"server": {"data_dir": str(work / "data"), "address": SERVER}})
    store = open_store(database)
    clock = ManualClock(datetime(2026, 11, 20, 10, 0, tzinfo=UTC))
    processor = Processor(config, store, clock, secret=b"s" * 32)
    from pbem.cli.mailbox import new_mail, reply_to

    inproc = InProcess(store, processor, clock)
    submit, outbox = inproc.submit, inproc.outbox

    tables = [(f"w{i}@example.org", f"b{i}@example.org") for i in range(games)]
    out = submit([new_mail(w, SERVER, f"new alien-city with {b} as black") for w, b in tables])
    out = submit([reply_to(to(out, b)[0], b, "accept") for _w, b in tables])
    moves = []
    for rcpt, mail in out:
        if "Your move" in headline(mail):
            moves.append(Player(rcpt, seed=len(moves)).respond(mail))
    inproc.store_mail(moves)
    # The statements a move sends, counted on the first tenth of the moves (untimed).
    statements, stop_counting = _counting(store)
    if cold:  # as on a worker that did not process the game's last mail: every move replays
        processor.cache = StateCache()
    counted = timed_moves(processor, limit=max(1, len(moves) // 10))
    sent = statements()
    stop_counting()
    if cold:
        processor.cache = StateCache()
    # The setup's objects would be scanned by a full collection that lands in the timed part or
    # not, by chance (0.27 s of a 0.9 s part once): a running server made them long ago.
    gc.collect()
    profiler = cProfile.Profile() if profile else None
    cpu, wall = time.thread_time(), time.perf_counter()
    if profiler:
        profiler.enable()
    done = 0 if setup_only else timed_moves(processor)
    if profiler:
        profiler.disable()
    cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
    rows = outbox()
    applied = sum(1 for r in rows if b"Your move" in r.raw[:4000])
    store.close()
    if profiler:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(profile)
        pstats.Stats(profiler).sort_stats("tottime").print_stats(profile)
    return {"moves": done, "your_move_mails": applied, "cpu_ms_per_move": cpu * 1000 / max(done, 1),
            "wall_ms_per_move": wall * 1000 / max(done, 1), "statements_per_move": sent / max(counted, 1)}


_INSTRUCTIONS = re.compile(r"I\s+refs:\s+([\d,]+)")
_RESULT = re.compile(r"'moves': (\d+)")


def _counted(code: Path, store: str, games: int, setup_only: bool) -> tuple[int, int]:
    """(instructions, moves processed) of one run of this script under cachegrind."""
    command = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
               sys.executable, str(code / "bench" / "processor_cpu.py"), "--games", str(games),
               "--store", store, "--whole-rounds"] + (["--setup-only"] if setup_only else [])
    done = subprocess.run(command, capture_output=True, text=True, cwd=code,
                          env={**os.environ, "PYTHONHASHSEED": "0"})
    found, moves = _INSTRUCTIONS.search(done.stderr), _RESULT.search(done.stdout)
    if done.returncode != 0 or found is None or moves is None:
        raise SystemExit(f"--instructions: the run under valgrind failed (exit {done.returncode}):\n"
                         + (done.stderr or done.stdout)[-2000:])
    return int(found.group(1).replace(",", "")), int(moves.group(1))


def instructions(code: Path, store: str, games: int) -> dict[str, float]:
    """Instructions per move: a run with the timed part less one without it, over its moves."""
    whole, moves = _counted(code, store, games, setup_only=False)
    setup, _none = _counted(code, store, games, setup_only=True)
    return {"moves": moves, "instructions_per_move": round((whole - setup) / max(moves, 1)),
            "instructions_whole_run": whole, "instructions_without_moves": setup}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--store", choices=("sqlite", "postgresql", "both"), default="both")
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="print cProfile's top N")
    parser.add_argument("--cold", action="store_true",
                        help="empty the state cache before the moves: every move replays its game's "
                             "record, as on a worker that did not process the game's last mail")
    parser.add_argument("--instructions", action="store_true",
                        help="count the instructions a move executes (valgrind's cachegrind) instead "
                             "of timing it: the figure to compare two versions by on a busy host")
    parser.add_argument("--setup-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--whole-rounds", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.whole_rounds:  # a transaction's size then depends on nothing timed
        processor_module.TOGETHER_SECONDS = float("inf")
    if args.instructions:
        if shutil.which("valgrind") is None:
            raise SystemExit("--instructions: valgrind is not on the PATH (apt install valgrind)")
        code = Path(__file__).resolve().parents[1]
        stores = ("sqlite", "postgresql") if args.store == "both" else (args.store,)
        for store in stores:
            print(f"{store:<10}", instructions(code, store, args.games), flush=True)
        return 0
    with tempfile.TemporaryDirectory(prefix="pbem-cpu-") as tmp:
        work = Path(tmp)
        if args.store in ("sqlite", "both"):
            print("sqlite    ", run(str(work / "pbem.sqlite3"), args.games, work, args.profile, args.cold,
                                     args.setup_only), flush=True)
        if args.store in ("postgresql", "both"):
            from tests.services.postgres import Postgres
            with Postgres(durable=True) as postgres:
                dsn = postgres.create_database("cpu")
                print("postgresql", run(dsn, args.games, work, args.profile, args.cold, args.setup_only),
                      flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
